/* Shared declarations of the fake libsandbox / libsystem_sandbox used by the
 * Linux tests of internal/libsandbox. Not Apple code: a test double written
 * from the layouts of the private interface as WebKit's SandboxSPI.h declares
 * them (https://opensource.apple.com/source/WTF/WTF-7609.2.9.0.5/wtf/spi/darwin/SandboxSPI.h.auto.html)
 * and as internal/libsandbox's doc describes. */
#ifndef FAKE_H
#define FAKE_H

#include <stddef.h>

/* Allocation kinds: every block the fakes hand out is tagged, so freeing it
 * through the wrong function counts as a bad free. */
enum {
	KIND_PARAMS = 1,    /* sandbox_params_t struct */
	KIND_PARAMS_ARRAY,  /* its pointer array */
	KIND_PROFILE,       /* sandbox_profile_t struct */
	KIND_BYTECODE,      /* profile->data */
	KIND_BUILTIN,       /* profile->builtin */
	KIND_ERROR,         /* compile error string (sandbox_free_error) */
	KIND_TOKEN,         /* extension token (free) */
	KIND_MAX
};

void *fake_alloc(int kind, size_t n);
char *fake_strdup(int kind, const char *s);
/* Validates, poisons (0xDD; 0 for structs) and quarantines p. Returns 0, or -1 on a bad free. */
int fake_release(void *p, int kind);

/* Overlap detector for calls that must be serialised. */
void fake_enter(void);
void fake_leave(void);

/* Records whether the last freed bytecode buffer was fully poisoned. */
void fake_note_bytecode_poisoned(long v);

#endif

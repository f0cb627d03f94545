/* Fake libSystem (libsystem_sandbox part): error free, sandbox_check,
 * extensions, free and __mac_syscall. __mac_syscall decodes the Sandbox call-2
 * block of libsandbox.md §8.4 and records what it read, so the test checks the
 * layout the binding builds. No errno: purego does not capture it on Linux. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "fake.h"

static int sandboxed_pid = -1;
static long filtered_calls; /* sandbox_check with a filter: must stay 0 */
static long check_calls;
static long last_check_pid;
static long last_check_type;
static char last_check_op[128];
static long last_check_op_null;

static long raw_calls;
static long raw_fields[8]; /* pid, kind, flags, word6, reserved-nonzero, result-null, op-null, arg-null */
static char raw_op[128];
static char raw_arg[256];

static int64_t next_handle = 100;
static int64_t released[64];
static int nreleased;

void fake_set_sandboxed(int pid) { sandboxed_pid = pid; }
long fake_filtered_check_calls(void) { return filtered_calls; }
long fake_check_calls(void) { return check_calls; }
long fake_last_check(int i) {
	switch (i) {
	case 0: return last_check_pid;
	case 1: return last_check_type;
	case 2: return last_check_op_null;
	}
	return -1;
}
const char *fake_last_check_op(void) { return last_check_op; }
long fake_raw_calls(void) { return raw_calls; }
long fake_raw_field(int i) { return i >= 0 && i < 8 ? raw_fields[i] : -1; }
const char *fake_raw_op(void) { return raw_op; }
const char *fake_raw_arg(void) { return raw_arg; }
long fake_released(int64_t h) {
	for (int i = 0; i < nreleased; i++)
		if (released[i] == h)
			return 1;
	return 0;
}

void sandbox_free_error(char *e) { fake_release(e, KIND_ERROR); }

/* The libSystem free the binding uses for tokens. Only tokens reach it. */
void free(void *p) { fake_release(p, KIND_TOKEN); }

static void copy(char *dst, size_t n, const char *src) {
	snprintf(dst, n, "%s", src == NULL ? "" : src);
}

int sandbox_check(pid_t pid, const char *operation, int type, ...) {
	check_calls++;
	last_check_pid = pid;
	last_check_type = type;
	last_check_op_null = operation == NULL;
	copy(last_check_op, sizeof last_check_op, operation);
	/* A filter argument would be variadic: the binding must not send one here. */
	if ((type & 0x81ffffff) != 0) {
		filtered_calls++;
		return -1;
	}
	if (pid <= 0)
		return -1;
	return pid == sandboxed_pid ? 1 : 0;
}

char *sandbox_extension_issue_file(const char *cls, const char *path, uint32_t flags) {
	char buf[1024];
	if (cls == NULL || path == NULL || path[0] != '/')
		return NULL;
	snprintf(buf, sizeof buf, "tok;%s;%s;%u", cls, path, (unsigned)flags);
	return fake_strdup(KIND_TOKEN, buf);
}

int64_t sandbox_extension_consume(const char *token) {
	if (token == NULL || strncmp(token, "tok;", 4) != 0)
		return -1;
	return next_handle++;
}

int sandbox_extension_release(int64_t handle) {
	if (handle < 100 || handle >= next_handle || nreleased == 64)
		return -1;
	for (int i = 0; i < nreleased; i++)
		if (released[i] == handle)
			return -1;
	released[nreleased++] = handle;
	return 0;
}

#ifndef FAKE_OMIT_MAC_SYSCALL
/* Sandbox call 2 (libsandbox.md §8.4): 0xa0 bytes of 8-byte words. */
int __mac_syscall(const char *policy, int call, void *arg) {
	uint64_t *w = arg;
	raw_calls++;
	if (policy == NULL || strcmp(policy, "Sandbox") != 0 || call != 2 || w == NULL)
		return -1;
	const char *op = (const char *)(uintptr_t)w[2];
	const char *farg = (const char *)(uintptr_t)w[4];
	long nonzero = 0;
	for (int i = 7; i < 0xa0 / 8; i++)
		if (w[i] != 0)
			nonzero++;
	raw_fields[0] = (long)w[1];
	raw_fields[1] = (long)w[3];
	raw_fields[2] = (long)w[5];
	raw_fields[3] = (long)w[6];
	raw_fields[4] = nonzero;
	raw_fields[5] = w[0] == 0;
	raw_fields[6] = op == NULL;
	raw_fields[7] = farg == NULL;
	copy(raw_op, sizeof raw_op, op);
	copy(raw_arg, sizeof raw_arg, farg);
	if (w[0] == 0 || nonzero != 0)
		return -1;
	/* Denied: a global-name lookup of a name starting "deny.", or, with no
	 * filter, the pid marked sandboxed. */
	uint64_t denied;
	if (w[3] == 0)
		denied = (long)w[1] == sandboxed_pid;
	else
		denied = farg != NULL && strncmp(farg, "deny.", 5) == 0;
	*(uint64_t *)(uintptr_t)w[0] = denied;
	return 0;
}
#endif

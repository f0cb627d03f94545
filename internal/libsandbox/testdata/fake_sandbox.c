/* Fake /usr/lib/libsandbox.1.dylib: the compile and params symbols, with the
 * struct layouts of libsandbox.md §3. The "compiler" emits
 *   "FAKEBC1\n" <text> "\n" then "<key>=<value>\n" per parameter
 * reading the parameter strings only now, as the real one keeps the pointers. */
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "fake.h"

typedef struct {
	const char **params; /* key, value, key, value, ... */
	size_t size;
	size_t available;
} params_t;

typedef struct {
	char *builtin;
	const unsigned char *data;
	size_t size;
} profile_t;

/* Layout queries so the test can compare with the Go mirror. */
long fake_profile_size(void) { return sizeof(profile_t); }
long fake_profile_offset(int field) {
	switch (field) {
	case 0: return offsetof(profile_t, builtin);
	case 1: return offsetof(profile_t, data);
	case 2: return offsetof(profile_t, size);
	}
	return -1;
}
long fake_params_size(void) { return sizeof(params_t); }

params_t *sandbox_create_params(void) {
	params_t *p = fake_alloc(KIND_PARAMS, sizeof *p);
	if (p == NULL)
		return NULL;
	p->available = 2; /* small on purpose: exercises growth */
	p->params = fake_alloc(KIND_PARAMS_ARRAY, p->available * sizeof(char *));
	return p;
}

int sandbox_set_param(params_t *p, const char *key, const char *value) {
	if (p == NULL || key == NULL || value == NULL)
		return -1;
	if (p->size + 2 > p->available) {
		size_t n = p->available * 2;
		const char **a = fake_alloc(KIND_PARAMS_ARRAY, n * sizeof(char *));
		if (a == NULL)
			return -1;
		memcpy(a, p->params, p->size * sizeof(char *));
		fake_release(p->params, KIND_PARAMS_ARRAY);
		p->params = a;
		p->available = n;
	}
	/* Like libsandbox: the strings are not copied. */
	p->params[p->size++] = key;
	p->params[p->size++] = value;
	return 0;
}

void sandbox_free_params(params_t *p) {
	if (p == NULL)
		return;
	fake_release(p->params, KIND_PARAMS_ARRAY);
	fake_release(p, KIND_PARAMS);
}

static const char *after(const char *text, const char *word) {
	const char *s = strstr(text, word);
	return s == NULL ? NULL : s + strlen(word);
}

profile_t *sandbox_compile_string(const char *text, params_t *params, char **error) {
	const char *msg;
	profile_t *prof = NULL;
	unsigned char *data;
	size_t n, off;

	fake_enter();
	if (error != NULL)
		*error = NULL;
	/* "(fail <message>)" fails with that message. */
	if ((msg = after(text, "(fail ")) != NULL) {
		if (error != NULL) {
			char buf[256];
			size_t m = strcspn(msg, ")");
			if (m > sizeof buf - 1)
				m = sizeof buf - 1;
			memcpy(buf, msg, m);
			buf[m] = 0;
			*error = fake_strdup(KIND_ERROR, buf);
		}
		goto out;
	}
	n = strlen("FAKEBC1\n") + strlen(text) + 1;
	if (params != NULL) {
		for (size_t i = 0; i + 1 < params->size; i += 2)
			n += strlen(params->params[i]) + 1 + strlen(params->params[i + 1]) + 1;
	}
	prof = fake_alloc(KIND_PROFILE, sizeof *prof);
	data = fake_alloc(KIND_BYTECODE, n);
	if (prof == NULL || data == NULL)
		goto out;
	off = 0;
#define PUT(s)                                     \
	do {                                           \
		size_t l_ = strlen(s);                     \
		memcpy(data + off, (s), l_);               \
		off += l_;                                 \
	} while (0)
	PUT("FAKEBC1\n");
	PUT(text);
	PUT("\n");
	if (params != NULL) {
		for (size_t i = 0; i + 1 < params->size; i += 2) {
			PUT(params->params[i]);
			PUT("=");
			PUT(params->params[i + 1]);
			PUT("\n");
		}
	}
#undef PUT
	prof->data = data;
	prof->size = off;
	/* "(builtin)" makes the profile name a builtin. */
	if (strstr(text, "(builtin)") != NULL)
		prof->builtin = fake_strdup(KIND_BUILTIN, "fake-builtin");
	/* "(warn)" sets *error although the compile succeeded. */
	if (strstr(text, "(warn)") != NULL && error != NULL)
		*error = fake_strdup(KIND_ERROR, "fake warning");
out:
	fake_leave();
	return prof;
}

void sandbox_free_profile(profile_t *p) {
	if (p == NULL)
		return;
	if (p->data != NULL) {
		unsigned char *d = (unsigned char *)p->data;
		size_t n = p->size;
		long poisoned = 1;
		fake_release(d, KIND_BYTECODE);
		for (size_t i = 0; i < n; i++)
			if (d[i] != 0xDD)
				poisoned = 0;
		fake_note_bytecode_poisoned(poisoned);
	}
	if (p->builtin != NULL)
		fake_release(p->builtin, KIND_BUILTIN);
	fake_release(p, KIND_PROFILE);
}

/* Accounting allocator shared by the two fake libraries (linked into both),
 * plus the query functions the Go test calls through purego. Freed blocks are
 * poisoned and kept (never returned to libc), so a late read sees 0xDD
 * (or zeros, for structs holding pointers). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake.h"

#define MAGIC_LIVE 0x4c495645u /* "LIVE" */
#define MAGIC_DEAD 0x44454144u /* "DEAD" */

struct hdr {
	struct hdr *next;
	size_t size;
	unsigned magic;
	int kind;
	/* keeps the payload 16-byte aligned like malloc's */
	long pad;
};

static struct hdr *blocks;
static int lock;
static long live[KIND_MAX];
static long total[KIND_MAX];
static long bad;
static long inflight;
static long overlaps;
static long last_bytecode_poisoned = -1;

static void acquire(void) {
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void release_lock(void) { __atomic_store_n(&lock, 0, __ATOMIC_RELEASE); }

void *fake_alloc(int kind, size_t n) {
	struct hdr *h = calloc(1, sizeof *h + n + 1);
	if (h == NULL)
		return NULL;
	h->size = n;
	h->magic = MAGIC_LIVE;
	h->kind = kind;
	acquire();
	h->next = blocks;
	blocks = h;
	live[kind]++;
	total[kind]++;
	release_lock();
	return h + 1;
}

char *fake_strdup(int kind, const char *s) {
	size_t n = strlen(s);
	char *p = fake_alloc(kind, n + 1);
	if (p != NULL)
		memcpy(p, s, n + 1);
	return p;
}

int fake_release(void *p, int kind) {
	struct hdr *h;
	int ok = 0;
	if (p == NULL)
		return 0;
	acquire();
	/* Only pointers this allocator handed out are looked at. */
	for (h = blocks; h != NULL; h = h->next) {
		if ((void *)(h + 1) == p)
			break;
	}
	if (h != NULL && h->magic == MAGIC_LIVE && h->kind == kind) {
		/* Structs holding pointers are zeroed, so a late read through them
		 * fails cleanly; data is poisoned with 0xDD. */
		int structs = kind == KIND_PARAMS || kind == KIND_PARAMS_ARRAY || kind == KIND_PROFILE;
		memset(p, structs ? 0 : 0xDD, h->size);
		h->magic = MAGIC_DEAD;
		live[kind]--;
		ok = 1;
	} else {
		bad++;
	}
	release_lock();
	return ok ? 0 : -1;
}

void fake_enter(void) {
	struct timespec ts = {0, 200000}; /* 0.2 ms widens the overlap window */
	if (__atomic_add_fetch(&inflight, 1, __ATOMIC_SEQ_CST) > 1)
		__atomic_add_fetch(&overlaps, 1, __ATOMIC_SEQ_CST);
	nanosleep(&ts, NULL);
}

void fake_leave(void) { __atomic_sub_fetch(&inflight, 1, __ATOMIC_SEQ_CST); }

void fake_note_bytecode_poisoned(long v) { last_bytecode_poisoned = v; }

/* Queries for the Go test. */
long fake_live(int kind) { return kind > 0 && kind < KIND_MAX ? live[kind] : -1; }
long fake_total(int kind) { return kind > 0 && kind < KIND_MAX ? total[kind] : -1; }
long fake_live_all(void) {
	long n = 0;
	for (int k = 1; k < KIND_MAX; k++)
		n += live[k];
	return n;
}
long fake_bad_frees(void) { return bad; }
long fake_overlaps(void) { return __atomic_load_n(&overlaps, __ATOMIC_SEQ_CST); }
long fake_last_bytecode_poisoned(void) { return last_bytecode_poisoned; }

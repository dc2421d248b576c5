/*
 * strace_prog.c - the small program whose `strace -f -tt -T` output is
 * tests/import/strace_threads.txt (the test input of `tlbsim import strace`):
 * two threads map, write, MADV_DONTNEED and unmap 64 KiB three times each
 * while the main thread holds a 1 MiB mapping; then a forked child maps and
 * unmaps a page. Made with:
 *   cc -O2 -pthread -o strace_prog strace_prog.c
 *   strace -f -tt -T -o strace_threads.txt ./strace_prog
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		char *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		memset(p, 1, 65536);
		madvise(p, 65536, MADV_DONTNEED);
		munmap(p, 65536);
	}
	return NULL;
}

int main(void)
{
	char *big = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED)
		return 1;
	memset(big, 2, 1 << 20);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	mprotect(big, 4096, PROT_READ);
	pid_t c = fork();
	if (c == 0) {
		char *q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (q != MAP_FAILED) {
			q[0] = 1;
			munmap(q, 4096);
		}
		_exit(0);
	}
	waitpid(c, NULL, 0);
	munmap(big, 1 << 20);
	return 0;
}

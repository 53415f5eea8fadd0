/* runtime/system.c — the rest of what picolibc asks of the system, for a machine with one program,
 * no clock and no signals: abort() and a failed assert() end the program with status 128 + SIGABRT
 * (134), as a shell reports them; time() and clock() return -1 (README "Programs").
 *
 * raise(sig) without a handler calls kill(getpid(), sig); the program is its only process.
 */
#include <errno.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/times.h>
#include <unistd.h>

enum { kThisProcess = 1 };

pid_t getpid(void) { return kThisProcess; }

int kill(pid_t pid, int sig) {
    if (pid != kThisProcess) {
        errno = ESRCH;
        return -1;
    }
    if (sig == 0) return 0;
    _exit(128 + sig);
}

int gettimeofday(struct timeval* restrict now, void* restrict zone) {
    (void)now;
    (void)zone;
    errno = ENOSYS;
    return -1;
}

clock_t times(struct tms* counts) {
    (void)counts;
    errno = ENOSYS;
    return (clock_t)-1;
}

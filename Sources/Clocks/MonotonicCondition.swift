#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Nanoseconds on the monotonic clock (CLOCK_MONOTONIC): immune to wall-clock steps, the clock of every deadline.
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// A mutex with one condition variable whose timed waits use absolute monotonic deadlines, so a wall-clock
/// jump can neither stall nor rush the mix clock (NSCondition waits on the wall clock).
/// Heap-allocated because pthread objects must not move.
final class MonotonicCondition: @unchecked Sendable {  // thread-safe by construction: it is the lock
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        #if canImport(Glibc)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
        #else
        pthread_cond_init(cond, nil)
        #endif
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func broadcast() { pthread_cond_broadcast(cond) }

    /// Waits (lock held) until signalled.
    func wait() { pthread_cond_wait(cond, mutex) }

    /// Waits (lock held) until signalled or the monotonic time reaches `deadline`; may wake early.
    func wait(untilNanoseconds deadline: UInt64) {
        #if canImport(Glibc)
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        _ = pthread_cond_timedwait(cond, mutex, &ts)
        #else
        let now = monotonicNanoseconds()
        guard deadline > now else { return }
        let delta = deadline - now
        var ts = timespec(tv_sec: Int(delta / 1_000_000_000), tv_nsec: Int(delta % 1_000_000_000))
        _ = pthread_cond_timedwait_relative_np(cond, mutex, &ts)
        #endif
    }
}

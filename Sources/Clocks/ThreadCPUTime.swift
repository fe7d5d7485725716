#if canImport(Glibc)
import Glibc
#endif

/// CPU time the calling thread has used, in microseconds: what a piece of work cost, whatever else the machine
/// was doing (a decode, a composite, an encode).
public func threadCPUMicros() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Int64(t.tv_sec) * 1_000_000 + Int64(t.tv_nsec) / 1000
}

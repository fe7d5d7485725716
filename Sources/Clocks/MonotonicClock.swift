import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Monotonic milliseconds for packet and tick bookkeeping (never the wall clock: it can jump).
public enum MonotonicClock {
    public static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}

import Foundation

/// Wall-clock time as RTCP writes it: 32.32 fixed-point seconds since 1900 (RFC 3550 §4).
enum NTPTime {
    /// Seconds from 1900-01-01 to 1970-01-01.
    static let unixEpochOffset: Double = 2_208_988_800

    static func now() -> UInt64 { from(unixSeconds: Date().timeIntervalSince1970) }

    static func from(unixSeconds: Double) -> UInt64 {
        let ntp = unixSeconds + unixEpochOffset
        let seconds = UInt64(ntp)
        let fraction = UInt64((ntp - Double(seconds)) * 4_294_967_296)
        return seconds << 32 | min(fraction, 0xFFFF_FFFF)
    }

    /// The middle 32 bits (16.16 seconds): what a reception report's LSR echoes.
    static func middle(_ ntp: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: ntp >> 16) }
}

import Media

/// A capture time burned into a picture: 16 bits of the millisecond (CLOCK_MONOTONIC, `ConferenceClient.nowMs`),
/// 80×80 blocks in two rows of 8 on mid grey, white for 1. Read back from a 640×360 picture at 1:1 (the region of a
/// 640×360 canvas, or the room view) it says how old the picture is, modulo 65.536 s.
public enum BurnedTime {
    static let block = 80

    public static func draw(_ frame: inout VideoFrame, _ ms: Int64) {
        for i in frame.y.indices { frame.y[i] = 128 }
        let code = Int(ms & 0xFFFF)
        for bit in 0..<16 {
            let x0 = (bit % 8) * block, y0 = 40 + (bit / 8) * 100
            let value: UInt8 = code >> bit & 1 == 1 ? 235 : 16
            for y in y0..<(y0 + block) {
                for x in x0..<(x0 + block) { frame.y[y * frame.width + x] = value }
            }
        }
    }

    /// The code in a 640×360 picture, nil when a block is neither clearly white nor black.
    public static func read(_ frame: VideoFrame) -> Int? {
        guard frame.width == 640, frame.height == 360 else { return nil }
        return read(luma: frame.y)
    }

    /// The code in the luma plane of a 640×360 picture (8-bit, no padding).
    public static func read(luma: some RandomAccessCollection<UInt8>) -> Int? {
        guard luma.count >= 640 * 360 else { return nil }
        var code = 0
        for bit in 0..<16 {
            let x = (bit % 8) * block + block / 2, y = 40 + (bit / 8) * 100 + block / 2
            let value = Int(luma[luma.index(luma.startIndex, offsetBy: y * 640 + x)])
            guard value > 200 || value < 50 else { return nil }
            if value > 200 { code |= 1 << bit }
        }
        return code
    }

    /// How far `ms` (now, same clock) is past `code`, modulo 65.536 s.
    public static func age(of code: Int, at ms: Int64) -> Int { (Int(ms) - code) & 0xFFFF }
}

/// The picture size a video frame declares in its headers, read without decoding it: a room refuses a sender
/// whose pictures are larger than it allows before a decoder spends anything on them.
public enum KeyframeSize {
    /// A VP8 keyframe's size (RFC 6386 §9.1: the frame tag, the start code 9d 01 2a, then 14-bit width and
    /// height); nil for an interframe or a frame too short to say.
    public static func vp8(_ frame: [UInt8]) -> (width: Int, height: Int)? {
        guard frame.count >= 10, frame[0] & 0x01 == 0, frame[3] == 0x9D, frame[4] == 0x01, frame[5] == 0x2A
        else { return nil }
        let width = (Int(frame[6]) | Int(frame[7]) << 8) & 0x3FFF
        let height = (Int(frame[8]) | Int(frame[9]) << 8) & 0x3FFF
        return (width, height)
    }

    /// The size declared by the first sequence parameter set in an Annex-B access unit (ITU-T H.264 §7.3.2.1.1,
    /// with the cropping window applied), or nil when there is none before the first slice or it does not parse.
    public static func h264(_ accessUnit: [UInt8]) -> (width: Int, height: Int)? {
        var i = 0
        let n = accessUnit.count
        while i + 3 < n {
            // A NAL unit starts after 00 00 01 (a 4-byte start code ends the same way).
            guard accessUnit[i] == 0, accessUnit[i + 1] == 0, accessUnit[i + 2] == 1 else {
                i += 1
                continue
            }
            let start = i + 3
            let type = accessUnit[start] & 0x1F
            // Parameter sets come before the slices that use them: no need to scan a megabyte of slice data.
            if type == 1 || type == 5 { return nil }
            if type == 7 {
                var end = start + 1
                while end + 2 < n, !(accessUnit[end] == 0 && accessUnit[end + 1] == 0 && accessUnit[end + 2] <= 1) {
                    end += 1
                }
                if end + 2 >= n { end = n }
                return sequenceParameterSet(accessUnit[(start + 1)..<end])
            }
            i = start
        }
        return nil
    }

    /// Parses an SPS payload (after the NAL header byte, emulation prevention bytes still in).
    static func sequenceParameterSet(_ escaped: ArraySlice<UInt8>) -> (width: Int, height: Int)? {
        var bits = ExpGolombReader(escaped)
        guard let profile = bits.read(8), bits.read(16) != nil, bits.unsigned() != nil else { return nil }
        var chromaFormat = 1
        var separateColourPlanes = false
        switch profile {
        case 100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135:
            guard let format = bits.unsigned(), format <= 3 else { return nil }
            chromaFormat = format
            if format == 3 {
                guard let flag = bits.read(1) else { return nil }
                separateColourPlanes = flag == 1
            }
            guard bits.unsigned() != nil, bits.unsigned() != nil, bits.read(1) != nil,
                let scalingMatrix = bits.read(1)
            else { return nil }
            if scalingMatrix == 1 {
                for list in 0..<(chromaFormat == 3 ? 12 : 8) {
                    guard let present = bits.read(1) else { return nil }
                    if present == 1, !bits.skipScalingList(size: list < 6 ? 16 : 64) { return nil }
                }
            }
        default: break
        }
        guard bits.unsigned() != nil, let pocType = bits.unsigned() else { return nil }
        switch pocType {
        case 0:
            guard bits.unsigned() != nil else { return nil }
        case 1:
            guard bits.read(1) != nil, bits.signed() != nil, bits.signed() != nil,
                let cycle = bits.unsigned(), cycle <= 255
            else { return nil }
            for _ in 0..<cycle {
                guard bits.signed() != nil else { return nil }
            }
        case 2: break
        default: return nil
        }
        guard bits.unsigned() != nil, bits.read(1) != nil, let widthMbs = bits.unsigned(),
            let heightUnits = bits.unsigned(), let frameMbsOnly = bits.read(1)
        else { return nil }
        if frameMbsOnly == 0, bits.read(1) == nil { return nil }
        guard bits.read(1) != nil, let cropping = bits.read(1) else { return nil }
        var width = (widthMbs + 1) * 16
        var height = (2 - frameMbsOnly) * (heightUnits + 1) * 16
        if cropping == 1 {
            guard let left = bits.unsigned(), let right = bits.unsigned(), let top = bits.unsigned(),
                let bottom = bits.unsigned()
            else { return nil }
            let chromaArrayType = separateColourPlanes ? 0 : chromaFormat
            let unitX = chromaArrayType == 1 || chromaArrayType == 2 ? 2 : 1
            let unitY = (chromaArrayType == 1 ? 2 : 1) * (2 - frameMbsOnly)
            width -= unitX * (left + right)
            height -= unitY * (top + bottom)
        }
        guard width > 0, height > 0 else { return nil }
        return (width, height)
    }
}

/// Reads bits and Exp-Golomb codes (H.264 §9.1) from an escaped NAL unit payload, dropping each emulation
/// prevention byte (00 00 03) as it goes.
struct ExpGolombReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int
    private var bit = 0
    private var zeros = 0
    private var current: UInt8 = 0
    private var loaded = false

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    private mutating func nextBit() -> Int? {
        if !loaded {
            guard index < bytes.endIndex else { return nil }
            var byte = bytes[index]
            if zeros >= 2, byte == 3 {
                index += 1
                zeros = 0
                guard index < bytes.endIndex else { return nil }
                byte = bytes[index]
            }
            zeros = byte == 0 ? zeros + 1 : 0
            current = byte
            loaded = true
            bit = 0
        }
        let value = Int(current >> (7 - bit)) & 1
        bit += 1
        if bit == 8 {
            loaded = false
            index += 1
        }
        return value
    }

    /// `count` bits (at most 32), most significant first.
    mutating func read(_ count: Int) -> Int? {
        var value = 0
        for _ in 0..<count {
            guard let b = nextBit() else { return nil }
            value = value << 1 | b
        }
        return value
    }

    /// ue(v); nil past the end or for a code longer than 32 bits.
    mutating func unsigned() -> Int? {
        var leadingZeros = 0
        while true {
            guard let b = nextBit() else { return nil }
            if b == 1 { break }
            leadingZeros += 1
            if leadingZeros > 31 { return nil }
        }
        guard let suffix = read(leadingZeros) else { return nil }
        return (1 << leadingZeros) - 1 + suffix
    }

    /// se(v).
    mutating func signed() -> Int? {
        guard let k = unsigned() else { return nil }
        return k & 1 == 1 ? (k + 1) / 2 : -(k / 2)
    }

    /// scaling_list() of §7.3.2.1.1.1: only the deltas are read.
    mutating func skipScalingList(size: Int) -> Bool {
        var last = 8
        var next = 8
        for _ in 0..<size {
            if next != 0 {
                guard let delta = signed(), (-128...127).contains(delta) else { return false }
                next = (last + delta + 256) % 256
            }
            last = next == 0 ? last : next
        }
        return true
    }
}

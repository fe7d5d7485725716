/// A source's H.264 as receivers' slots get it: each packet's NAL units rewritten with 4-byte lengths (AVCC, what
/// `H264Packetizer` sends), whatever the container framed them with (Annex B start codes from RTSP and MPEG-TS,
/// 1 to 4 byte lengths from FLV and MP4), and the sequence and picture parameter sets kept, from the stream's
/// extradata and from the packets that carry them, so that every keyframe can go out with them (a camera that
/// sends them only in its SDP, an MP4 that keeps them in `avcC`). Confined to the source's reading thread.
struct H264Units {
    /// Bytes of each NAL unit's length in the packets; nil: Annex B start codes.
    let lengthSize: Int?
    private(set) var sps: [UInt8] = []
    private(set) var pps: [UInt8] = []
    /// The last packet rewritten (its storage is reused).
    private(set) var avcc: [UInt8] = []

    static let idr: UInt8 = 5
    static let spsType: UInt8 = 7
    static let ppsType: UInt8 = 8
    /// Not sent: access unit delimiters and filler carry nothing a decoder needs.
    static let delimiter: UInt8 = 9
    static let filler: UInt8 = 12

    /// From the stream's extradata: an AVCDecoderConfigurationRecord (ISO 14496-15 §5.2.4.1), Annex B parameter
    /// sets, or nothing (the packets carry them). Nil for a record that does not parse.
    init?(extradata: UnsafeRawBufferPointer) {
        if extradata.count >= 7 && extradata[0] == 1 {
            lengthSize = Int(extradata[4] & 3) + 1
            var offset = 5
            for kind in [Self.spsType, Self.ppsType] {
                guard offset < extradata.count else { return nil }
                let count = Int(kind == Self.spsType ? extradata[offset] & 0x1F : extradata[offset])
                offset += 1
                for _ in 0..<count {
                    guard offset + 2 <= extradata.count else { return nil }
                    let length = Int(extradata[offset]) << 8 | Int(extradata[offset + 1])
                    offset += 2
                    guard length > 0, offset + length <= extradata.count else { return nil }
                    let unit = [UInt8](extradata[offset..<(offset + length)])
                    // The first of each kind: streams with several use the first (id 0) for every slice here.
                    if kind == Self.spsType && sps.isEmpty { sps = unit }
                    if kind == Self.ppsType && pps.isEmpty { pps = unit }
                    offset += length
                }
            }
        } else {
            lengthSize = nil
            Self.annexB(extradata) { unit in keep(unit) }
        }
    }

    /// The profile the stream's sequence parameter set declares (nil before one is known).
    var format: SourceVideoFormat? { SourceVideoFormat(sps: sps) }

    /// Rewrites one packet into `avcc`; says whether it holds an IDR picture and whether it carried the parameter
    /// sets itself. A malformed length ends the packet where it stands.
    mutating func rewrite(_ packet: UnsafeRawBufferPointer) -> (keyframe: Bool, carriesParameterSets: Bool) {
        avcc.removeAll(keepingCapacity: true)
        var keyframe = false
        var carries = false
        func take(_ unit: UnsafeRawBufferPointer) {
            guard !unit.isEmpty else { return }
            let type = unit[0] & 0x1F
            guard type != Self.delimiter && type != Self.filler else { return }
            if type == Self.idr { keyframe = true }
            if type == Self.spsType || type == Self.ppsType {
                carries = true
                keep(unit)
            }
            let n = unit.count
            avcc.append(UInt8(truncatingIfNeeded: n >> 24))
            avcc.append(UInt8(truncatingIfNeeded: n >> 16))
            avcc.append(UInt8(truncatingIfNeeded: n >> 8))
            avcc.append(UInt8(truncatingIfNeeded: n))
            avcc.append(contentsOf: unit)
        }
        if let lengthSize {
            var offset = 0
            while offset + lengthSize <= packet.count {
                var length = 0
                for i in 0..<lengthSize { length = length << 8 | Int(packet[offset + i]) }
                offset += lengthSize
                guard length > 0, offset + length <= packet.count else { break }
                take(UnsafeRawBufferPointer(rebasing: packet[offset..<(offset + length)]))
                offset += length
            }
        } else {
            Self.annexB(packet, take)
        }
        return (keyframe, carries)
    }

    private mutating func keep(_ unit: UnsafeRawBufferPointer) {
        guard let first = unit.first else { return }
        switch first & 0x1F {
        case Self.spsType: if !unit.elementsEqual(sps) { sps = [UInt8](unit) }
        case Self.ppsType: if !unit.elementsEqual(pps) { pps = [UInt8](unit) }
        default: break
        }
    }

    /// Each NAL unit of an Annex B byte stream (after `00 00 01` or `00 00 00 01`, without the zeros that end it).
    static func annexB(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        let n = bytes.count
        var i = 0
        var start = -1
        while i + 2 < n {
            if bytes[i] == 0 && bytes[i + 1] == 0 && bytes[i + 2] == 1 {
                if start >= 0 { emit(start, i) }
                i += 3
                start = i
            } else {
                i += 1
            }
        }
        if start >= 0 { emit(start, n) }
        func emit(_ from: Int, _ to: Int) {
            var end = to
            while end > from && bytes[end - 1] == 0 { end -= 1 }
            if end > from { body(UnsafeRawBufferPointer(rebasing: bytes[from..<end])) }
        }
    }
}

/// The H.264 a source forwards to receivers' slots, as RFC 6184's `profile-level-id` names it: its own stream's
/// profile when that can go as it is, else the constrained baseline Cohost encodes it to.
public struct SourceVideoFormat: Sendable, Equatable {
    public var profileIDC: UInt8
    /// constraint_set0..5 flags, as the SPS has them; only baseline's tell receivers anything (constrained
    /// baseline), so they are kept for baseline alone.
    public var constraints: UInt8
    public var levelIDC: UInt8

    public init(profileIDC: UInt8, constraints: UInt8, levelIDC: UInt8) {
        self.profileIDC = profileIDC
        self.constraints = profileIDC == 0x42 ? constraints : 0
        self.levelIDC = levelIDC
    }

    /// From a sequence parameter set (NAL header byte first); nil when it is not one.
    init?(sps: [UInt8]) {
        guard sps.count >= 4, sps[0] & 0x1F == H264Units.spsType else { return nil }
        self.init(profileIDC: sps[1], constraints: sps[2], levelIDC: sps[3])
    }

    /// Profiles a browser's slot can take as they are: baseline, main, high (8-bit 4:2:0, no B-frames checked
    /// elsewhere). High 10, 4:2:2 and the rest are encoded.
    public var forwardableAsIs: Bool { [0x42, 0x4D, 0x64].contains(profileIDC) }

    /// The constrained baseline (what x264's baseline profile writes: constraint_set0 and 1) of what Cohost encodes.
    public static func encoded(levelIDC: UInt8) -> SourceVideoFormat {
        SourceVideoFormat(profileIDC: 0x42, constraints: 0xC0, levelIDC: levelIDC)
    }

    public var profileLevelID: String {
        [profileIDC, constraints, levelIDC].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    public var fmtp: String { "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=\(profileLevelID)" }

    /// Whether a stream of `other`'s profile can go out as this format (the same profile and constraints).
    func sameProfile(as other: SourceVideoFormat) -> Bool {
        profileIDC == other.profileIDC && constraints == other.constraints
    }
}

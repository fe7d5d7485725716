/// One raw AAC frame (no ADTS header) and its presentation time in samples at 48 kHz.
public struct EncodedAudio: Sendable, Equatable {
    public var data: [UInt8]
    public var pts: Int64

    public init(data: [UInt8], pts: Int64) {
        self.data = data
        self.pts = pts
    }
}

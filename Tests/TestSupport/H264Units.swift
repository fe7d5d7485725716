/// H.264 byte framing for tests: AVCC (what `H264Encoder` writes) and Annex-B (what the depacketizer hands the
/// decoder), and the parameter sets of an AVCDecoderConfigurationRecord.
public enum H264Units {
    /// Splits AVCC data (4-byte big-endian lengths) into NAL units; nil when a length runs past the end.
    public static func avcc(_ data: [UInt8]) -> [[UInt8]]? {
        var nals: [[UInt8]] = []
        var i = 0
        while i < data.count {
            guard i + 4 <= data.count else { return nil }
            let n = Int(data[i]) << 24 | Int(data[i + 1]) << 16 | Int(data[i + 2]) << 8 | Int(data[i + 3])
            i += 4
            guard n > 0, i + n <= data.count else { return nil }
            nals.append(Array(data[i..<(i + n)]))
            i += n
        }
        return nals
    }

    /// The first SPS and PPS of an AVCDecoderConfigurationRecord (ISO/IEC 14496-15 §5.2.4.1, one of each as
    /// `H264Encoder` writes it).
    public static func parameterSets(record: [UInt8]) -> (sps: [UInt8], pps: [UInt8])? {
        guard record.count >= 8 else { return nil }
        let spsLength = Int(record[6]) << 8 | Int(record[7])
        let p = 8 + spsLength
        guard p + 3 <= record.count else { return nil }
        let ppsLength = Int(record[p + 1]) << 8 | Int(record[p + 2])
        guard p + 3 + ppsLength <= record.count else { return nil }
        return (Array(record[8..<p]), Array(record[(p + 3)..<(p + 3 + ppsLength)]))
    }

    /// NAL units as one Annex-B access unit, each behind a 4-byte start code.
    public static func annexB(_ nalUnits: [[UInt8]]) -> [UInt8] { nalUnits.flatMap { [0, 0, 0, 1] + $0 } }

    /// The NAL units of an Annex-B stream, without their start codes (3- or 4-byte).
    public static func nalUnits(annexB bytes: [UInt8]) -> [[UInt8]] {
        var starts: [(code: Int, nal: Int)] = []
        var i = 0
        while i + 2 < bytes.count {
            if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 1 {
                starts.append((i > 0 && bytes[i - 1] == 0 ? i - 1 : i, i + 3))
                i += 3
            } else {
                i += 1
            }
        }
        return starts.indices.map { k in
            Array(bytes[starts[k].nal..<(k + 1 < starts.count ? starts[k + 1].code : bytes.count)])
        }
    }
}

/// Builds the AVCDecoderConfigurationRecord (ISO/IEC 14496-15 §5.2.4.1): what FLV's AVC sequence header
/// and MP4's `avcC` box carry so a decoder can start from AVCC-framed NAL units.
enum AVCDecoderConfigurationRecord {
    /// One SPS and one PPS (raw NAL units, header byte included, no length prefix or start code).
    /// Returns nil when the SPS is too short to carry profile, constraints and level, or a NAL exceeds 65535 bytes.
    static func build(sps: [UInt8], pps: [UInt8]) -> [UInt8]? {
        guard sps.count >= 4, !pps.isEmpty, sps.count <= 0xFFFF, pps.count <= 0xFFFF else { return nil }
        let profileIDC = sps[1]
        var out: [UInt8] = [
            1,  // configurationVersion
            profileIDC,  // AVCProfileIndication
            sps[2],  // profile_compatibility (constraint flags)
            sps[3],  // AVCLevelIndication
            0xFC | 3,  // reserved '111111' + lengthSizeMinusOne = 3 (4-byte lengths)
            0xE0 | 1,  // reserved '111' + numOfSequenceParameterSets = 1
        ]
        out.reserveCapacity(out.count + 2 + sps.count + 3 + pps.count + 4)
        out += [UInt8(sps.count >> 8), UInt8(sps.count & 0xFF)] + sps
        out += [1, UInt8(pps.count >> 8), UInt8(pps.count & 0xFF)] + pps
        // High profiles append chroma format and bit depths (§5.2.4.1.1). x264 here always encodes
        // 8-bit 4:2:0, which is what these values state.
        if ![66, 77, 88].contains(profileIDC) {
            out += [
                0xFC | 1,  // reserved '111111' + chroma_format_idc = 1 (4:2:0)
                0xF8 | 0,  // reserved '11111' + bit_depth_luma_minus8 = 0
                0xF8 | 0,  // reserved '11111' + bit_depth_chroma_minus8 = 0
                0,  // numOfSequenceParameterSetExt
            ]
        }
        return out
    }
}

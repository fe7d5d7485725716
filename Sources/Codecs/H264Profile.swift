/// The H.264 profiles the output presets use; raw values are the names `x264_param_apply_profile` takes.
public enum H264Profile: String, Sendable, CaseIterable {
    case baseline, main, high

    /// `profile_idc` as it appears in the SPS and in the AVCDecoderConfigurationRecord.
    public var profileIDC: UInt8 {
        switch self {
        case .baseline: 66
        case .main: 77
        case .high: 100
        }
    }
}

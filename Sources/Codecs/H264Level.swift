/// An H.264 level (ITU-T H.264 Annex A, Table A-1): the decoding capability a stream declares in its SPS.
///
/// Custom room output settings (size, frame rate, bitrate, profile) are checked against these limits before
/// an encoder is opened, so a room cannot publish a stream no conforming decoder is obliged to play.
/// Only the limits that depend on those settings are modelled: MaxMBPS (macroblocks per second), MaxFS
/// (macroblocks per frame), the side limit of A.3.1/A.3.2 (each side at most sqrt(8 × MaxFS) macroblocks)
/// and MaxBR. DPB size, CPB size and MV range depend on encoder internals (x264 keeps them within the level
/// it signals).
///
/// The raw value is `level_idc`. Level 1b is 9, the number x264's `i_level_idc` takes and the one High
/// profiles write into the SPS; for Baseline and Main the SPS instead carries `level_idc` 11 with
/// `constraint_set3_flag` set (H.264 §7.4.2.1.1, A.3), a translation x264 makes itself when given 9.
///
/// Cases are declared (and `allCases` ordered, and `<` compares) by capability, so 1b sits between 1 and 1.1
/// even though its `level_idc` is the smallest.
public enum H264Level: UInt8, CaseIterable, Comparable, Sendable, CustomStringConvertible {
    case level1 = 10
    case level1b = 9
    case level1_1 = 11
    case level1_2 = 12
    case level1_3 = 13
    case level2 = 20
    case level2_1 = 21
    case level2_2 = 22
    case level3 = 30
    case level3_1 = 31
    case level3_2 = 32
    case level4 = 40
    case level4_1 = 41
    case level4_2 = 42
    case level5 = 50
    case level5_1 = 51
    case level5_2 = 52
    case level6 = 60
    case level6_1 = 61
    case level6_2 = 62

    /// The per-level limits that video settings can exceed, in Table A-1's own units.
    public struct Limits: Sendable, Equatable {
        /// MaxMBPS: macroblocks decoded per second.
        public let maxMacroblocksPerSecond: Int
        /// MaxFS: macroblocks per frame.
        public let maxFrameSizeMacroblocks: Int
        /// MaxBR: in units of cpbBrVclFactor bits/s, i.e. kbit/s for Baseline and Main.
        public let maxBitrate: Int
    }

    /// Source: ITU-T Rec. H.264, Annex A, Table A-1 ("Level limits"), columns MaxMBPS, MaxFS and MaxBR
    /// (levels 6 to 6.2 are in the editions from 2016 on). Cross-checked against x264's `x264_levels` table,
    /// whose level 6 to 6.2 rows are present in the libx264 build 164 this project links.
    public var limits: Limits {
        switch self {
        //                               MaxMBPS           MaxFS       MaxBR
        case .level1: Limits(maxMacroblocksPerSecond: 1_485, maxFrameSizeMacroblocks: 99, maxBitrate: 64)
        case .level1b: Limits(maxMacroblocksPerSecond: 1_485, maxFrameSizeMacroblocks: 99, maxBitrate: 128)
        case .level1_1: Limits(maxMacroblocksPerSecond: 3_000, maxFrameSizeMacroblocks: 396, maxBitrate: 192)
        case .level1_2: Limits(maxMacroblocksPerSecond: 6_000, maxFrameSizeMacroblocks: 396, maxBitrate: 384)
        case .level1_3: Limits(maxMacroblocksPerSecond: 11_880, maxFrameSizeMacroblocks: 396, maxBitrate: 768)
        case .level2: Limits(maxMacroblocksPerSecond: 11_880, maxFrameSizeMacroblocks: 396, maxBitrate: 2_000)
        case .level2_1: Limits(maxMacroblocksPerSecond: 19_800, maxFrameSizeMacroblocks: 792, maxBitrate: 4_000)
        case .level2_2: Limits(maxMacroblocksPerSecond: 20_250, maxFrameSizeMacroblocks: 1_620, maxBitrate: 4_000)
        case .level3: Limits(maxMacroblocksPerSecond: 40_500, maxFrameSizeMacroblocks: 1_620, maxBitrate: 10_000)
        case .level3_1: Limits(maxMacroblocksPerSecond: 108_000, maxFrameSizeMacroblocks: 3_600, maxBitrate: 14_000)
        case .level3_2: Limits(maxMacroblocksPerSecond: 216_000, maxFrameSizeMacroblocks: 5_120, maxBitrate: 20_000)
        case .level4: Limits(maxMacroblocksPerSecond: 245_760, maxFrameSizeMacroblocks: 8_192, maxBitrate: 20_000)
        case .level4_1: Limits(maxMacroblocksPerSecond: 245_760, maxFrameSizeMacroblocks: 8_192, maxBitrate: 50_000)
        case .level4_2: Limits(maxMacroblocksPerSecond: 522_240, maxFrameSizeMacroblocks: 8_704, maxBitrate: 50_000)
        case .level5: Limits(maxMacroblocksPerSecond: 589_824, maxFrameSizeMacroblocks: 22_080, maxBitrate: 135_000)
        case .level5_1: Limits(maxMacroblocksPerSecond: 983_040, maxFrameSizeMacroblocks: 36_864, maxBitrate: 240_000)
        case .level5_2: Limits(maxMacroblocksPerSecond: 2_073_600, maxFrameSizeMacroblocks: 36_864, maxBitrate: 240_000)
        case .level6: Limits(maxMacroblocksPerSecond: 4_177_920, maxFrameSizeMacroblocks: 139_264, maxBitrate: 240_000)
        case .level6_1:
            Limits(maxMacroblocksPerSecond: 8_355_840, maxFrameSizeMacroblocks: 139_264, maxBitrate: 480_000)
        case .level6_2:
            Limits(maxMacroblocksPerSecond: 16_711_680, maxFrameSizeMacroblocks: 139_264, maxBitrate: 800_000)
        }
    }

    /// The highest level: if settings exceed one of its limits, no level holds them.
    public static let highest = H264Level.level6_2

    /// `level_idc` (9 for level 1b; see the type's documentation).
    public var levelIDC: UInt8 { rawValue }

    /// The level's name as Table A-1 writes it: "1", "1b", "1.1", … "3.1", "4", … "6.2".
    public var name: String {
        if self == .level1b { return "1b" }
        let major = rawValue / 10, minor = rawValue % 10
        return minor == 0 ? "\(major)" : "\(major).\(minor)"
    }

    public var description: String { "level \(name)" }

    /// The longest side, in macroblocks, a frame may have at this level: floor(sqrt(8 × MaxFS)) (H.264 A.3.1,
    /// A.3.2), which stops a level's frame area being spent on one absurdly long side.
    public var maxSideMacroblocks: Int {
        let bound = 8 * limits.maxFrameSizeMacroblocks
        var side = Int(Double(bound).squareRoot())
        // Correct any floating-point rounding so that side² ≤ bound < (side + 1)².
        while side * side > bound { side -= 1 }
        while (side + 1) * (side + 1) <= bound { side += 1 }
        return side
    }

    /// The highest VCL bitrate this level allows for `profile`, in kbit/s: MaxBR × cpbBrVclFactor / 1000
    /// (Table A-2). Exact, because every MaxBR in Table A-1 is a multiple of 4.
    public func maxBitrateKbps(for profile: H264Profile) -> Int {
        limits.maxBitrate * profile.cpbBrVclFactor / 1000
    }

    public static func < (lhs: H264Level, rhs: H264Level) -> Bool { lhs.rank < rhs.rank }

    /// Capability order: 1 < 1b < 1.1, then `level_idc` order.
    private var rank: Int { self == .level1b ? 105 : Int(rawValue) * 10 }
}

extension H264Profile {
    /// cpbBrVclFactor (H.264 Table A-2): bits/s per unit of MaxBR for this profile's VCL bitrate.
    public var cpbBrVclFactor: Int {
        switch self {
        case .baseline, .main: 1_000
        case .high: 1_250
        }
    }
}

/// Video settings that no H.264 level (or no meaningful stream) allows; `message` names the limit and its value.
public struct H264LevelError: Error, CustomStringConvertible, Equatable, Sendable {
    /// Which limit the settings exceed.
    public enum Limit: Sendable, Equatable {
        /// A width, height, frame rate or bitrate that is zero or negative.
        case invalidSettings
        /// A side longer than sqrt(8 × MaxFS) macroblocks at the highest level.
        case sideLength
        /// More macroblocks per frame than MaxFS at the highest level.
        case frameSize
        /// More macroblocks per second than MaxMBPS at the highest level.
        case macroblockRate
        /// A bitrate above MaxBR × cpbBrVclFactor at the highest level.
        case bitrate
    }

    public let limit: Limit
    public let message: String

    public init(limit: Limit, message: String) {
        self.limit = limit
        self.message = message
    }

    public var description: String { message }
}

extension H264Level {
    /// The lowest level whose limits hold `width`×`height` at `fps` frames/s and `bitrateKbps` kbit/s in
    /// `profile`, or nil when no level does (or a setting is not positive). Dimensions round up to whole
    /// 16×16 macroblocks, as the encoder pads them.
    public static func minimumLevel(
        width: Int, height: Int, fps: Int, bitrateKbps: Int,
        profile: H264Profile
    ) -> H264Level? {
        try? check(width: width, height: height, fps: fps, bitrateKbps: bitrateKbps, profile: profile)
    }

    /// Checks settings against Table A-1 and returns the lowest level that holds them; throws naming the first
    /// limit (side, frame size, macroblock rate, bitrate) that even the highest level cannot meet.
    /// Safe on hostile input: no arithmetic here can overflow.
    @discardableResult
    public static func check(
        width: Int, height: Int, fps: Int, bitrateKbps: Int,
        profile: H264Profile
    ) throws(H264LevelError) -> H264Level {
        guard width > 0, height > 0, fps > 0, bitrateKbps > 0 else {
            throw H264LevelError(
                limit: .invalidSettings,
                message:
                    "video settings must be positive, got \(width)x\(height) at \(fps) fps, \(bitrateKbps) kbps")
        }
        let size = "\(width)x\(height)"
        let top = highest
        // Rounding up without (width + 15), which could overflow for a hostile Int.max.
        let widthMBs = width / 16 + (width % 16 == 0 ? 0 : 1)
        let heightMBs = height / 16 + (height % 16 == 0 ? 0 : 1)
        let inMBs = "\(widthMBs)x\(heightMBs) macroblocks"

        // Sides first: once both are bounded (≤ 1055), the products below cannot overflow.
        let longest = max(widthMBs, heightMBs)
        guard longest <= top.maxSideMacroblocks else {
            throw H264LevelError(
                limit: .sideLength,
                message:
                    "\(size) is \(inMBs); a side of \(longest) macroblocks is longer than the "
                    + "\(top.maxSideMacroblocks) H.264 allows (sqrt(8 × MaxFS \(top.limits.maxFrameSizeMacroblocks)) "
                    + "at \(top))")
        }
        let frameMBs = widthMBs * heightMBs
        guard frameMBs <= top.limits.maxFrameSizeMacroblocks else {
            throw H264LevelError(
                limit: .frameSize,
                message:
                    "\(size) is \(inMBs) = \(frameMBs) per frame; H.264 allows at most "
                    + "\(top.limits.maxFrameSizeMacroblocks) (MaxFS at \(top))")
        }
        let (rate, overflow) = frameMBs.multipliedReportingOverflow(by: fps)
        guard !overflow, rate <= top.limits.maxMacroblocksPerSecond else {
            let needed = overflow ? "\(frameMBs) × \(fps)" : "\(rate)"
            throw H264LevelError(
                limit: .macroblockRate,
                message:
                    "\(size) at \(fps) fps needs \(needed) macroblocks/s; H.264 allows at most "
                    + "\(top.limits.maxMacroblocksPerSecond) (MaxMBPS at \(top))")
        }
        let maxKbps = top.maxBitrateKbps(for: profile)
        guard bitrateKbps <= maxKbps else {
            let basis =
                profile.cpbBrVclFactor == 1_000
                ? "MaxBR at \(top)"
                : "\(Double(profile.cpbBrVclFactor) / 1000) × MaxBR \(top.limits.maxBitrate) at \(top)"
            throw H264LevelError(
                limit: .bitrate,
                message:
                    "\(bitrateKbps) kbps is above the \(maxKbps) kbps H.264 allows for \(profile.rawValue) profile "
                    + "(\(basis))")
        }

        // Every column of Table A-1 is non-decreasing in level order, so the highest level holds these
        // settings and the first level that does is the answer.
        return allCases.first { level in
            let l = level.limits
            return longest <= level.maxSideMacroblocks && frameMBs <= l.maxFrameSizeMacroblocks
                && rate <= l.maxMacroblocksPerSecond && bitrateKbps <= level.maxBitrateKbps(for: profile)
        } ?? top
    }
}

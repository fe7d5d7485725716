import Testing
@testable import Codecs

/// One set of custom video settings and the level Table A-1 gives it, worked out by hand in `why`.
struct LevelCase: CustomTestStringConvertible, Sendable {
    let width: Int, height: Int, fps: Int, kbps: Int
    let profile: H264Profile
    let level: H264Level
    let why: String

    var testDescription: String { "\(width)x\(height)@\(fps) \(kbps) kbps \(profile.rawValue) → \(level)" }
}

@Suite("H264Level")
struct H264LevelTests {
    // Macroblocks: ceil(width / 16) × ceil(height / 16); rate: that × fps. A level holds the settings when
    // frame ≤ MaxFS, rate ≤ MaxMBPS, each side ≤ floor(sqrt(8 × MaxFS)) and kbps ≤ MaxBR × factor / 1000.
    static let cases: [LevelCase] = [
        LevelCase(
            width: 1280, height: 720, fps: 30, kbps: 2_000, profile: .high, level: .level3_1,
            why: "80x45 = 3600 MBs (3.0 allows 1620); 3600 × 30 = 108000, exactly 3.1's MaxMBPS"),
        LevelCase(
            width: 1281, height: 720, fps: 30, kbps: 2_000, profile: .high, level: .level3_2,
            why: "1281 rounds up to 81 MBs: 81x45 = 3645 > 3.1's MaxFS 3600; 3.2 allows 5120"),
        LevelCase(
            width: 1920, height: 1080, fps: 30, kbps: 6_000, profile: .main, level: .level4,
            why: "120x68 (1080 rounds up) = 8160 > 3.2's 5120; 8160 × 30 = 244800 ≤ 245760"),
        LevelCase(
            width: 1920, height: 1080, fps: 60, kbps: 6_000, profile: .high, level: .level4_2,
            why: "8160 × 60 = 489600 > 4.1's 245760, ≤ 4.2's 522240; 8160 ≤ 8704"),
        LevelCase(
            width: 720, height: 1280, fps: 24, kbps: 1_536, profile: .main, level: .level3_1,
            why: "portrait 45x80 = 3600 > 3.0's 1620, = 3.1's MaxFS; 3600 × 24 = 86400 ≤ 108000"),
        LevelCase(
            width: 272, height: 480, fps: 24, kbps: 800, profile: .high, level: .level2_1,
            why: "17x30 = 510 > 2.0's MaxFS 396, ≤ 2.1's 792; 510 × 24 = 12240 ≤ 19800; side 30 ≤ 79"),
        LevelCase(
            width: 3840, height: 2160, fps: 60, kbps: 20_000, profile: .high, level: .level5_2,
            why: "240x135 = 32400; × 60 = 1944000 > 5.1's 983040, ≤ 5.2's 2073600"),
        LevelCase(
            width: 16, height: 4000, fps: 30, kbps: 500, profile: .baseline, level: .level4,
            why: "1x250 = 250 MBs fits 1.1's MaxFS 396, but the 250-MB side needs sqrt(8 × MaxFS) ≥ 250: "
                + "3.2 allows 202, 4 allows 256"),
        LevelCase(
            width: 1280, height: 720, fps: 30, kbps: 16_000, profile: .main, level: .level3_2,
            why: "bitrate: 3.1's MaxBR 14000 < 16000 ≤ 3.2's 20000"),
        LevelCase(
            width: 1280, height: 720, fps: 30, kbps: 16_000, profile: .high, level: .level3_1,
            why: "High may run 1.25 × MaxBR: 3.1 allows 17500"),
        LevelCase(
            width: 1920, height: 1080, fps: 30, kbps: 24_000, profile: .main, level: .level4_1,
            why: "4's MaxBR 20000 < 24000 ≤ 4.1's 50000"),
        LevelCase(
            width: 1920, height: 1080, fps: 30, kbps: 24_000, profile: .high, level: .level4,
            why: "1.25 × 20000 = 25000 ≥ 24000"),
        LevelCase(
            width: 128, height: 96, fps: 30, kbps: 64, profile: .baseline, level: .level1,
            why: "8x6 = 48 MBs; × 30 = 1440 ≤ 1485; 64 kbps = MaxBR 64"),
        LevelCase(
            width: 128, height: 96, fps: 30, kbps: 100, profile: .baseline, level: .level1b,
            why: "100 kbps > 1's 64, ≤ 1b's 128"),
        LevelCase(
            width: 128, height: 96, fps: 30, kbps: 150, profile: .main, level: .level1_1,
            why: "150 kbps > 1b's 128, ≤ 1.1's 192"),
        LevelCase(
            width: 128, height: 96, fps: 30, kbps: 150, profile: .high, level: .level1b,
            why: "1.25 × 128 = 160 ≥ 150"),
        LevelCase(
            width: 8192, height: 4352, fps: 30, kbps: 20_000, profile: .high, level: .level6,
            why: "512x272 = 139264 = 6's MaxFS (5.2 allows 36864); × 30 = 4177920 = 6's MaxMBPS"),
        LevelCase(
            width: 1280, height: 720, fps: 30, kbps: 900_000, profile: .high, level: .level6_2,
            why: "6.1 allows 1.25 × 480000 = 600000 kbps, 6.2 allows 1.25 × 800000 = 1000000"),
    ]

    @Test("the lowest level whose Table A-1 limits hold the settings", arguments: cases)
    func minimumLevel(c: LevelCase) throws {
        #expect(
            H264Level.minimumLevel(
                width: c.width, height: c.height, fps: c.fps, bitrateKbps: c.kbps,
                profile: c.profile) == c.level, "\(c.why)")
        let checked = try H264Level.check(
            width: c.width, height: c.height, fps: c.fps, bitrateKbps: c.kbps,
            profile: c.profile)
        #expect(checked == c.level)
    }

    @Test("a frame of more macroblocks than any level's MaxFS is refused, naming MaxFS")
    func frameSizeTooLarge() {
        let error = #expect(throws: H264LevelError.self) {
            try H264Level.check(width: 8192, height: 8192, fps: 30, bitrateKbps: 20_000, profile: .high)
        }
        #expect(error?.limit == .frameSize)
        #expect(
            error?.message == "8192x8192 is 512x512 macroblocks = 262144 per frame; "
                + "H.264 allows at most 139264 (MaxFS at level 6.2)")
        #expect(
            H264Level.minimumLevel(
                width: 8192, height: 8192, fps: 30, bitrateKbps: 20_000,
                profile: .high) == nil)
    }

    @Test("a side longer than sqrt(8 × MaxFS) macroblocks is refused even when the frame area fits")
    func sideTooLong() {
        // 1x1056 = 1056 MBs is far below MaxFS 139264, but floor(sqrt(8 × 139264)) = 1055.
        let error = #expect(throws: H264LevelError.self) {
            try H264Level.check(width: 16, height: 16_896, fps: 30, bitrateKbps: 500, profile: .baseline)
        }
        #expect(error?.limit == .sideLength)
        #expect(
            error?.message == "16x16896 is 1x1056 macroblocks; a side of 1056 macroblocks is longer than "
                + "the 1055 H.264 allows (sqrt(8 × MaxFS 139264) at level 6.2)")
        // One macroblock less fits, at level 6 (5.2's side limit is 543).
        #expect(
            H264Level.minimumLevel(
                width: 16, height: 16_880, fps: 30, bitrateKbps: 500,
                profile: .baseline) == .level6)
    }

    @Test("a macroblock rate above level 6.2's MaxMBPS is refused, naming the rate")
    func macroblockRateTooHigh() {
        let error = #expect(throws: H264LevelError.self) {
            try H264Level.check(width: 7680, height: 4320, fps: 240, bitrateKbps: 50_000, profile: .main)
        }
        #expect(error?.limit == .macroblockRate)
        // 480x270 = 129600 MBs fits MaxFS; × 240 = 31104000.
        #expect(
            error?.message == "7680x4320 at 240 fps needs 31104000 macroblocks/s; "
                + "H.264 allows at most 16711680 (MaxMBPS at level 6.2)")
        #expect(
            H264Level.minimumLevel(
                width: 7680, height: 4320, fps: 120, bitrateKbps: 50_000,
                profile: .main) == .level6_2)  // 15552000 ≤ 16711680
    }

    @Test("a bitrate above the highest MaxBR for the profile is refused; High gets 1.25 × MaxBR")
    func bitrateTooHigh() {
        let main = #expect(throws: H264LevelError.self) {
            try H264Level.check(width: 1280, height: 720, fps: 30, bitrateKbps: 800_001, profile: .main)
        }
        #expect(main?.limit == .bitrate)
        #expect(
            main?.message == "800001 kbps is above the 800000 kbps H.264 allows for main profile "
                + "(MaxBR at level 6.2)")
        let high = #expect(throws: H264LevelError.self) {
            try H264Level.check(width: 1280, height: 720, fps: 30, bitrateKbps: 1_000_001, profile: .high)
        }
        #expect(
            high?.message == "1000001 kbps is above the 1000000 kbps H.264 allows for high profile "
                + "(1.25 × MaxBR 800000 at level 6.2)")
        #expect(
            H264Level.minimumLevel(
                width: 1280, height: 720, fps: 30, bitrateKbps: 1_000_000,
                profile: .high) == .level6_2)
    }

    @Test("zero or negative settings are refused, and hostile huge values do not overflow")
    func hostileSettings() {
        let zero = #expect(throws: H264LevelError.self) {
            try H264Level.check(width: 0, height: 720, fps: 30, bitrateKbps: 2_000, profile: .main)
        }
        #expect(zero?.limit == .invalidSettings)
        #expect(zero?.message == "video settings must be positive, got 0x720 at 30 fps, 2000 kbps")
        for (w, h, fps, kbps) in [(1280, 720, -30, 2_000), (1280, 720, 30, 0), (1280, -1, 30, 2_000)] {
            #expect(H264Level.minimumLevel(width: w, height: h, fps: fps, bitrateKbps: kbps, profile: .main) == nil)
        }
        let wide = #expect(throws: H264LevelError.self) {
            try H264Level.check(width: Int.max, height: Int.max, fps: Int.max, bitrateKbps: Int.max, profile: .high)
        }
        #expect(wide?.limit == .sideLength)
        let fast = #expect(throws: H264LevelError.self) {
            try H264Level.check(width: 1920, height: 1080, fps: Int.max, bitrateKbps: 6_000, profile: .high)
        }
        #expect(
            fast?.message == "1920x1080 at 9223372036854775807 fps needs 8160 × 9223372036854775807 "
                + "macroblocks/s; H.264 allows at most 16711680 (MaxMBPS at level 6.2)")
    }

    @Test("table A-1 rows: level_idc, names, and the limits quoted in the task")
    func tableRows() {
        #expect(
            H264Level.allCases.map(\.levelIDC)
                == [10, 9, 11, 12, 13, 20, 21, 22, 30, 31, 32, 40, 41, 42, 50, 51, 52, 60, 61, 62])
        #expect(
            H264Level.allCases.map(\.name)
                == [
                    "1", "1b", "1.1", "1.2", "1.3", "2", "2.1", "2.2", "3", "3.1", "3.2",
                    "4", "4.1", "4.2", "5", "5.1", "5.2", "6", "6.1", "6.2",
                ])
        #expect(
            H264Level.level3_1.limits
                == .init(
                    maxMacroblocksPerSecond: 108_000, maxFrameSizeMacroblocks: 3_600,
                    maxBitrate: 14_000))
        #expect(
            H264Level.level4.limits
                == .init(
                    maxMacroblocksPerSecond: 245_760, maxFrameSizeMacroblocks: 8_192,
                    maxBitrate: 20_000))
        #expect(
            H264Level.level5_1.limits
                == .init(
                    maxMacroblocksPerSecond: 983_040, maxFrameSizeMacroblocks: 36_864,
                    maxBitrate: 240_000))
        #expect(
            [H264Level.level1, .level3_1, .level3_2, .level4, .level5_2, .level6_2].map(\.maxSideMacroblocks)
                == [28, 169, 202, 256, 543, 1055])
        #expect(
            [H264Level.level1, .level1b, .level3_1, .level6_2].map { $0.maxBitrateKbps(for: .high) }
                == [80, 160, 17_500, 1_000_000])
        #expect(H264Level.level4.maxBitrateKbps(for: .baseline) == 20_000)
        #expect(H264Level.level1 < .level1b && H264Level.level1b < .level1_1 && H264Level.level5_2 < .level6)
        #expect(H264Level.allCases.sorted() == H264Level.allCases)
        #expect(H264Level.level3_1.description == "level 3.1")
    }

    /// `check` diagnoses against the highest level only and then takes the first level that fits; that is only
    /// right if no column of the table ever decreases from one level to the next.
    @Test("every Table A-1 column is non-decreasing in level order")
    func columnsAreMonotone() {
        for (lower, higher) in zip(H264Level.allCases, H264Level.allCases.dropFirst()) {
            #expect(lower.limits.maxMacroblocksPerSecond <= higher.limits.maxMacroblocksPerSecond, "\(lower)")
            #expect(lower.limits.maxFrameSizeMacroblocks <= higher.limits.maxFrameSizeMacroblocks, "\(lower)")
            #expect(lower.limits.maxBitrate <= higher.limits.maxBitrate, "\(lower)")
        }
    }

    /// x264 picks its own level (`i_level_idc` = -1, auto) from the same table; its SPS level_idc, copied into
    /// the AVCDecoderConfigurationRecord's AVCLevelIndication byte, must agree with ours.
    @Test(
        "x264's automatically chosen level_idc matches minimumLevel",
        // Not 1b (Baseline/Main signal it as 11 + constraint_set3_flag), not sizes H264Encoder refuses (odd),
        // not the 8K / 900 Mbps rows (memory and time for no extra coverage).
        arguments: cases.filter {
            $0.level != .level1b && $0.width % 2 == 0 && $0.width <= 3840
                && $0.kbps <= 100_000
        })
    func agreesWithX264(c: LevelCase) throws {
        let config = H264EncoderConfig(
            width: c.width, height: c.height, fps: c.fps, bitrateKbps: c.kbps,
            keyintFrames: 60, profile: c.profile)
        let encoder = try H264Encoder(config: config)
        try #require(encoder.decoderConfigurationRecord.count > 3)
        #expect(encoder.decoderConfigurationRecord[3] == c.level.levelIDC, "\(c.why)")
    }
}

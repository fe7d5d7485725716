import Testing
import TestSupport
@testable import RTP

/// Real NAL units from `ffmpeg -f lavfi -i testsrc=size=64x48:rate=5 -frames:v 2 -c:v libx264 -preset ultrafast
/// -tune zerolatency -threads 1 -qp 51 -bsf:v h264_mp4toannexb,filter_units=remove_types=6 -f h264`
/// (SEI removed). Their Annex-B concatenation decodes with ffmpeg to the same two pictures as the encoder's file.
enum H264Fixture {
    /// Sequence parameter set (type 7, NRI 3): High profile 0xf4, level 1.0.
    static let sps = hex("67f4000a9196847b0110000003001000000300a8f1226a")
    /// Picture parameter set (type 8, NRI 3).
    static let pps = hex("68ce01946480")
    /// The IDR slice (type 5, NRI 3) of picture 1; 0x88 after the header starts with a 1 bit: first_mb_in_slice 0.
    static let idr = hex(
        """
        6588843a084018f730dc5dd7ff0b2327c0043f5c59f1f1be1befd7f7c00166443655670f8577fc023e7913e00047cf22
        7c09c6aa8ede6762889f003f8420e40fffff8e008037200b67f0bffff88000700004003c63bdb7c00c3fff8420e4002f
        fffe0e02000206ffe12ffaffe0e00078bfe022f5b6fff8420107d07032fc4fff8ee9922326113f944c00040104c7ef19
        20ffffff0e3774660be4a8054f767068d683f005ada63631ebfc62fdf1dbffc74075d264f5f075bfe0eb7c1d6ff0ed33
        fffc34a67fffad49d771d01c4a699ec623573f55735573ffff87a99fffe3a015246b96d23e3173f31c949371dbe00328
        91e980141069fdfe5d0b32fd6cb2b397ad20800776085da45b1ab2c3adaaeaa0c54b552fc99965152f01f4d21b18f43a
        06035297ff9b4db801fd260002005e80535c7eee1d23965672cd3fd7959cb2b72fc00cc429004b48f576d7e5672c3a43
        96dcddb6f26659332fc741c2f4ffb7b7c01a0f8000806a001909b7f87994b0f314bf0f314b0f314bf0046002f602ca34
        dbbf72b72c9997eaa59454bf084008bdda6d1fae79cc3edcba5dc003f998727a7a821bf552894b55f28e63f8004e8d02
        66598815877ffedfedd0032ee6ca1f800c9a3f093dfe836152ca2a5fc0
        """)
    /// The P slice (type 1, NRI 2) of picture 2, also first_mb_in_slice 0.
    static let pSlice = hex(
        """
        419a22975ff15f3f15ffffddfffff7777cb4bfc57fffff5555d57ddfc75a3ffe2bffffaaffffea2eab93199f88ffee2b
        77ffe0
        """)
    /// The start of a later slice of a multi-slice picture from the same encoder: 0x05 0x26 begins
    /// ue(v) 00000101001 = first_mb_in_slice 40, so the picture's head is elsewhere.
    static let laterSlice = hex("41052688a17c4cd995d5")

    /// STAP-A of SPS, PPS, IDR: 78 (F=0, NRI=3, type 24), then 16-bit size + NAL unit for each.
    static let stapA: [UInt8] = [0x78] + [0x00, 0x17] + sps + [0x00, 0x06] + pps + [0x01, 0xCD] + idr
    /// STAP-A of the parameter sets only.
    static let parameterSets: [UInt8] = [0x78] + [0x00, 0x17] + sps + [0x00, 0x06] + pps
    /// FU-A pieces of the IDR slice: FU indicator 7c (F=0, NRI=3, type 28), FU header 85 / 05 / 45
    /// (S, none, E; type 5), then 150, 150 and 160 of the 460 bytes after the NAL header.
    static let fuA: [[UInt8]] = [
        [0x7C, 0x85] + Array(idr[1..<151]),
        [0x7C, 0x05] + Array(idr[151..<301]),
        [0x7C, 0x45] + Array(idr[301...]),
    ]

}

@Suite struct H264DepacketizerTests {
    typealias F = H264Fixture
    static let t1: UInt32 = 90_000, t2: UInt32 = 108_000, t3: UInt32 = 126_000  // 5 fps at 90 kHz

    static func packet(_ payload: [UInt8], _ timestamp: UInt32, marker: Bool = false) -> RTPPacket {
        RTPPacket(
            marker: marker, payloadType: 102, sequenceNumber: 0, timestamp: timestamp, ssrc: 0x1234,
            payload: payload)
    }

    /// Pushes packets in order; `lossBefore` marks indices that follow a gap.
    static func run(
        _ packets: [RTPPacket], lossBefore: Set<Int> = [],
        into d: inout H264Depacketizer
    ) -> [EncodedFrame] {
        var frames: [EncodedFrame] = []
        for (i, p) in packets.enumerated() {
            if let f = d.push(p, afterLoss: lossBefore.contains(i)) { frames.append(f) }
            while let f = d.takeReadyFrame() { frames.append(f) }
        }
        return frames
    }

    static let keyframe = EncodedFrame(
        data: H264Units.annexB([F.sps, F.pps, F.idr]), rtpTimestamp: t1, isKeyframe: true)
    static let pFrame = EncodedFrame(data: H264Units.annexB([F.pSlice]), rtpTimestamp: t2, isKeyframe: false)

    @Test func singleNALUnitPacketsBecomeOneAnnexBAccessUnitAtTheMarker() {
        var d = H264Depacketizer()
        #expect(d.push(Self.packet(F.sps, Self.t1), afterLoss: false) == nil)
        #expect(d.push(Self.packet(F.pps, Self.t1), afterLoss: false) == nil)
        let first = d.push(Self.packet(F.idr, Self.t1, marker: true), afterLoss: false)
        #expect(first == Self.keyframe)
        #expect(first?.data.count == 502)  // 3 start codes + 23 + 6 + 461
        #expect(first.map { Array($0.data.prefix(6)) } == [0, 0, 0, 1, 0x67, 0xF4])
        #expect(d.push(Self.packet(F.pSlice, Self.t2, marker: true), afterLoss: false) == Self.pFrame)
        #expect(d.droppedFrames == 0 && d.droppedPackets == 0)
    }

    @Test func stapACarriesParameterSetsAndTheIDRSlice() throws {
        #expect(try H264Payload(payload: F.stapA) == .aggregation([3..<26, 28..<34, 36..<497]))
        var d = H264Depacketizer()
        let frames = Self.run(
            [
                Self.packet(F.stapA, Self.t1, marker: true),
                Self.packet(F.pSlice, Self.t2, marker: true),
            ], into: &d)
        #expect(frames == [Self.keyframe, Self.pFrame])
    }

    @Test func fuAFragmentsAcrossThreePacketsReassembleTheIDRSlice() throws {
        #expect(F.fuA.map { Array($0.prefix(3)) } == [[0x7C, 0x85, 0x88], [0x7C, 0x05, 0x66], [0x7C, 0x45, 0x00]])
        #expect(
            try H264Payload(payload: F.fuA[0])
                == .fragment(H264Fragment(start: true, end: false, nalHeader: 0x65, data: 2..<152)))
        #expect(
            try H264Payload(payload: F.fuA[2])
                == .fragment(H264Fragment(start: false, end: true, nalHeader: 0x65, data: 2..<162)))
        var d = H264Depacketizer()
        let packets =
            [Self.packet(F.parameterSets, Self.t1)]
            + F.fuA.enumerated().map {
                Self.packet($1, Self.t1, marker: $0 == 2)
            }
        #expect(Self.run(packets, into: &d) == [Self.keyframe])
        #expect(d.droppedFrames == 0)
    }

    @Test func onlyAnIDRSliceMakesAKeyframe() {
        var d = H264Depacketizer()
        // Parameter sets before a P slice do not make it decodable on its own; an IDR without them in
        // this access unit is still an IDR (the decoder has them from before).
        let frames = Self.run(
            [
                Self.packet(F.parameterSets, Self.t1), Self.packet(F.pSlice, Self.t1, marker: true),
                Self.packet(F.idr, Self.t2, marker: true),
            ], into: &d)
        #expect(frames.map(\.isKeyframe) == [false, true])
        #expect(frames.map(\.data) == [H264Units.annexB([F.sps, F.pps, F.pSlice]), H264Units.annexB([F.idr])])
    }

    @Test func lostMiddleFUAFragmentDropsTheAccessUnit() {
        var d = H264Depacketizer()
        let packets = [
            Self.packet(F.parameterSets, Self.t1), Self.packet(F.fuA[0], Self.t1),
            Self.packet(F.fuA[2], Self.t1, marker: true), Self.packet(F.pSlice, Self.t2, marker: true),
        ]
        // fuA[1] is missing before index 2.
        #expect(Self.run(packets, lossBefore: [2], into: &d) == [Self.pFrame])
        #expect(d.droppedFrames == 1 && d.droppedPackets == 0)
    }

    @Test func lostLastFUAFragmentDropsTheUnitWhenTheNextTimestampArrives() {
        var d = H264Depacketizer()
        let packets = [
            Self.packet(F.fuA[0], Self.t1), Self.packet(F.fuA[1], Self.t1),
            Self.packet(F.pSlice, Self.t2, marker: true),
        ]
        let frames = Self.run(packets, lossBefore: [2], into: &d)
        #expect(
            frames == [
                EncodedFrame(
                    data: H264Units.annexB([F.pSlice]), rtpTimestamp: Self.t2, isKeyframe: false,
                    precededByLoss: true)
            ])
        #expect(d.droppedFrames == 1)
    }

    @Test func fuAWithoutItsStartIsDropped() {
        // As when joining a stream mid-unit (no loss seen) and when the start was lost (loss seen).
        for lossBefore: Set<Int> in [[], [0]] {
            var d = H264Depacketizer()
            let packets = [
                Self.packet(F.fuA[1], Self.t1), Self.packet(F.fuA[2], Self.t1, marker: true),
                Self.packet(F.pSlice, Self.t2, marker: true),
            ]
            #expect(Self.run(packets, lossBefore: lossBefore, into: &d).map(\.rtpTimestamp) == [Self.t2])
            #expect(d.droppedFrames == 1 && d.droppedPackets == 0)
        }
    }

    @Test func brokenFUASequencesDropTheUnit() {
        let cases: [[RTPPacket]] = [
            // The marker arrives on a middle piece: the end is missing.
            [Self.packet(F.fuA[0], Self.t1), Self.packet(F.fuA[1], Self.t1, marker: true)],
            // A whole NAL unit while the FU-A is open.
            [
                Self.packet(F.fuA[0], Self.t1), Self.packet(F.pps, Self.t1),
                Self.packet(F.fuA[2], Self.t1, marker: true),
            ],
            // A second start while the first is open.
            [
                Self.packet(F.fuA[0], Self.t1), Self.packet(F.fuA[0], Self.t1),
                Self.packet(F.fuA[2], Self.t1, marker: true),
            ],
            // The timestamp changes with the FU-A open: the next unit still arrives whole.
            [Self.packet(F.fuA[0], Self.t1), Self.packet(F.fuA[1], Self.t1)],
        ]
        for packets in cases {
            var d = H264Depacketizer()
            let frames = Self.run(packets + [Self.packet(F.pSlice, Self.t2, marker: true)], into: &d)
            #expect(frames == [Self.pFrame])
            #expect(d.droppedFrames == 1)
        }
    }

    @Test func newTimestampFinishesAnAccessUnitWithoutMarker() {
        var d = H264Depacketizer()
        #expect(d.push(Self.packet(F.stapA, Self.t1), afterLoss: false) == nil)
        #expect(d.push(Self.packet(F.pSlice, Self.t2), afterLoss: false) == Self.keyframe)
        // A marker packet with a new timestamp finishes two units: the second waits in takeReadyFrame.
        #expect(d.push(Self.packet(F.pSlice, Self.t3, marker: true), afterLoss: false) == Self.pFrame)
        #expect(
            d.takeReadyFrame()
                == EncodedFrame(data: H264Units.annexB([F.pSlice]), rtpTimestamp: Self.t3, isKeyframe: false))
        #expect(d.takeReadyFrame() == nil)
    }

    @Test func lossBetweenUnitsIsCountedAndMarkedOnTheNextCleanStart() {
        var d = H264Depacketizer()
        let frames = Self.run(
            [
                Self.packet(F.stapA, Self.t1, marker: true),
                Self.packet(F.pSlice, Self.t3, marker: true),
            ], lossBefore: [1], into: &d)
        #expect(
            frames == [
                Self.keyframe,
                EncodedFrame(
                    data: H264Units.annexB([F.pSlice]), rtpTimestamp: Self.t3,
                    isKeyframe: false, precededByLoss: true),
            ])
        #expect(d.droppedFrames == 1)
    }

    @Test func afterALossAUnitWithoutItsHeadIsSkipped() {
        // A later slice, filler data (12) or end of sequence (10) never opens an access unit.
        for head in [F.laterSlice, [0x0C, 0xFF, 0xFF, 0x80], [0x0A]] {
            var d = H264Depacketizer()
            let frames = Self.run(
                [
                    Self.packet(F.stapA, Self.t1, marker: true),
                    Self.packet(head, Self.t2), Self.packet(F.pSlice, Self.t2, marker: true),
                    Self.packet(F.pSlice, Self.t3, marker: true),
                ], lossBefore: [1], into: &d)
            #expect(frames.map(\.rtpTimestamp) == [Self.t1, Self.t3])
            #expect(frames.map(\.precededByLoss) == [false, false])
            #expect(d.droppedFrames == 1)
        }
    }

    @Test func afterALossADelimiterOrParameterSetOpensTheUnit() {
        let aud: [UInt8] = [0x09, 0xF0]  // access unit delimiter, primary_pic_type 7
        for head in [aud, F.sps] {
            var d = H264Depacketizer()
            let frames = Self.run(
                [Self.packet(head, Self.t2), Self.packet(F.pSlice, Self.t2, marker: true)],
                lossBefore: [0], into: &d)
            #expect(
                frames == [
                    EncodedFrame(
                        data: H264Units.annexB([head, F.pSlice]), rtpTimestamp: Self.t2, isKeyframe: false,
                        precededByLoss: true)
                ])
        }
    }

    @Test func malformedPacketDropsItsUnitAndTheRestOfItsPackets() {
        let overlong: [UInt8] = [0x78, 0x00, 0x20, 0x67, 0xF4]  // STAP-A claims 32 bytes, 2 follow
        // In the middle of a unit, and as its first packet.
        for packets in [
            [Self.packet(F.parameterSets, Self.t1), Self.packet(overlong, Self.t1)],
            [Self.packet(overlong, Self.t1), Self.packet(F.parameterSets, Self.t1)],
        ] {
            var d = H264Depacketizer()
            let frames = Self.run(
                packets + [
                    Self.packet(F.idr, Self.t1, marker: true),
                    Self.packet(F.pSlice, Self.t2, marker: true),
                ], into: &d)
            #expect(frames == [Self.pFrame])
            #expect(d.droppedFrames == 1 && d.droppedPackets == 1)
        }
    }

    @Test func reservedAndInterleavedTypesAreRefused() {
        var d = H264Depacketizer()
        // Empty; types 0, 30, 31; STAP-B, MTAP16, MTAP24, FU-B.
        let refused: [[UInt8]] = [
            [], [0x00, 0x80], [0x7E, 0x80], [0x7F, 0x80],
            [0x79, 0x00, 0x00, 0x00, 0x02, 0x09, 0xF0], [0x7A, 0x00], [0x7B, 0x00],
            [0x7D, 0x85, 0x00, 0x00, 0x88],
        ]
        for (i, payload) in refused.enumerated() {
            #expect(d.push(Self.packet(payload, UInt32(i), marker: true), afterLoss: false) == nil)
        }
        #expect(d.droppedPackets == 8 && d.droppedFrames == 8)
        #expect(d.push(Self.packet(F.stapA, Self.t1, marker: true), afterLoss: false) == Self.keyframe)
    }

    @Test func accessUnitSizeAndNALUnitCountAreBounded() {
        // SPS + PPS + IDR take exactly 502 bytes as Annex-B, whether aggregated or fragmented.
        let fragmented =
            [Self.packet(F.parameterSets, Self.t1)]
            + F.fuA.enumerated().map {
                Self.packet($1, Self.t1, marker: $0 == 2)
            }
        for packets in [[Self.packet(F.stapA, Self.t1, marker: true)], fragmented] {
            var fits = H264Depacketizer(maxAccessUnitBytes: 502)
            #expect(Self.run(packets, into: &fits) == [Self.keyframe])
            var tooSmall = H264Depacketizer(maxAccessUnitBytes: 501)
            let next = Self.packet(F.pSlice, Self.t2, marker: true)
            #expect(Self.run(packets + [next], into: &tooSmall) == [Self.pFrame])
            #expect(tooSmall.droppedFrames == 1 && tooSmall.droppedPackets == 0)
        }
        var twoUnits = H264Depacketizer(maxNALUnits: 2)
        #expect(Self.run([Self.packet(F.stapA, Self.t1, marker: true)], into: &twoUnits) == [])
        #expect(twoUnits.droppedFrames == 1)
        var threeUnits = H264Depacketizer(maxNALUnits: 3)
        #expect(Self.run([Self.packet(F.stapA, Self.t1, marker: true)], into: &threeUnits) == [Self.keyframe])
    }
}

@Suite struct H264PayloadTests {
    @Test func wholeNALUnitTypesAreSinglePackets() throws {
        for type: UInt8 in 1...23 {
            #expect(try H264Payload(payload: [0x60 | type, 0x80]) == .single)
        }
        #expect(try H264Payload(payload: [0x09]) == .single)
    }

    @Test func fuAHeaderFieldsComeFromIndicatorAndHeader() throws {
        // Indicator 5c: F=0, NRI=2; header 41: E, type 1 → NAL header 41. Two bytes only: an empty piece.
        #expect(
            try H264Payload(payload: [0x5C, 0x41])
                == .fragment(H264Fragment(start: false, end: true, nalHeader: 0x41, data: 2..<2)))
        // F bit set on the indicator carries into the NAL header.
        #expect(
            try H264Payload(payload: [0xFC, 0x85, 0x88])
                == .fragment(H264Fragment(start: true, end: false, nalHeader: 0xE5, data: 2..<3)))
    }

    @Test func refusesMalformedPayloadsWithTheExactError() {
        let cases: [([UInt8], H264PayloadError)] = [
            ([], .emptyPayload),
            ([0x00, 0x80], .reservedType(0)),
            ([0x1E], .reservedType(30)),
            ([0x7F, 0x00], .reservedType(31)),
            ([0x78], .truncatedAggregation),  // STAP-A without units
            ([0x78, 0x00, 0x20, 0x67, 0xF4], .truncatedAggregation),  // size 32, 2 bytes follow
            ([0x78, 0x00, 0x00, 0x00, 0x02, 0x09, 0xF0], .truncatedAggregation),  // zero size
            ([0x78, 0x00, 0x02, 0x09, 0xF0, 0x00], .truncatedAggregation),  // half a size field at the end
            ([0x7C], .truncatedFragmentHeader),
            ([0x7C, 0xC5, 0x88], .fragmentStartAndEnd),
            ([0x79, 0x00, 0x00], .interleavedPacketization(type: 25)),
            ([0x7A], .interleavedPacketization(type: 26)),
            ([0x7B], .interleavedPacketization(type: 27)),
            ([0x7D, 0x85], .interleavedPacketization(type: 29)),
        ]
        for (payload, error) in cases {
            #expect(throws: error) { try H264Payload(payload: payload) }
        }
        #expect(H264PayloadError.reservedType(30).description == "H.264 RTP payload uses reserved NAL unit type 30")
    }
}

import Testing
@testable import RTP

@Suite struct VP8DepacketizerTests {
    static let packets = vp8CapturedPackets.map { try! RTPPacket(bytes: hex($0)) }

    /// Pushes packets at `indices`; `lossBefore` marks indices that follow a gap.
    static func run(
        _ indices: [Int], lossBefore: Set<Int> = [], into d: inout VP8Depacketizer,
        transform: (RTPPacket) -> RTPPacket = { $0 }
    ) -> [EncodedFrame] {
        var frames: [EncodedFrame] = []
        for i in indices {
            if let f = d.push(transform(packets[i]), afterLoss: lossBefore.contains(i)) { frames.append(f) }
            while let f = d.takeReadyFrame() { frames.append(f) }
        }
        return frames
    }

    @Test func assemblesFragmentedFramesAtTheMarker() {
        var d = VP8Depacketizer()
        var frames: [EncodedFrame] = []
        for (i, p) in Self.packets.enumerated() {
            if let f = d.push(p, afterLoss: false) {
                frames.append(f)
                #expect([5, 7, 13].contains(i))  // only the marker packets finish frames
            }
        }
        #expect(frames.map(\.data.count) == [1091, 351, 1097])
        #expect(frames.map(\.rtpTimestamp) == [0x2CF4_52A2, 0x2CF4_98F2, 0x2CF4_DF42])
        #expect(frames.map(\.isKeyframe) == [true, false, true])
        // A VP8 key frame: frame tag, start code 9d 01 2a, then 64x48 (RFC 6386 §9.1).
        #expect(Array(frames[0].data.prefix(10)) == [0x50, 0x1A, 0x00, 0x9D, 0x01, 0x2A, 0x40, 0x00, 0x30, 0x00])
        #expect(Array(frames[1].data.prefix(3)) == [0xD1, 0x06, 0x00])
        #expect(d.droppedFrames == 0)
    }

    @Test func frameIsTheConcatenationOfPayloadsAfterTheDescriptor() {
        var d = VP8Depacketizer()
        let frames = Self.run(Array(0...5), into: &d)
        let expected = (0...5).flatMap { Self.packets[$0].payload.dropFirst(4) }
        #expect(frames.count == 1)
        #expect(frames.first?.data == expected)
    }

    @Test func lostMiddleFragmentDropsTheFrame() {
        var d = VP8Depacketizer()
        let frames = Self.run([0, 1, 3, 4, 5, 6, 7], lossBefore: [3], into: &d)
        #expect(frames.map(\.rtpTimestamp) == [0x2CF4_98F2])
        #expect(d.droppedFrames == 1)
    }

    @Test func lostMarkerPacketDropsTheFrameWhenTheNextTimestampArrives() {
        var d = VP8Depacketizer()
        let frames = Self.run([0, 1, 2, 3, 4, 6, 7], lossBefore: [6], into: &d)
        #expect(frames.map(\.data.count) == [351])
        #expect(d.droppedFrames == 1)
    }

    @Test func lostFirstFragmentSkipsContinuationsUntilTheNextStart() {
        var d = VP8Depacketizer()
        let frames = Self.run(Array(1...13), into: &d)
        #expect(frames.map(\.data.count) == [351, 1097])
    }

    @Test func lossBetweenFramesIsCountedAndMarkedOnTheNextFrame() {
        var d = VP8Depacketizer()
        let frames = Self.run(Array(0...5) + Array(8...13), lossBefore: [8], into: &d)
        #expect(frames.map(\.data.count) == [1091, 1097])
        #expect(frames.map(\.precededByLoss) == [false, true])
        #expect(d.droppedFrames == 1)
    }

    @Test func withoutMarkerBitsANewTimestampClosesTheFrame() {
        var d = VP8Depacketizer()
        let frames = Self.run(Array(0...13), into: &d) { p in
            var p = p
            p.marker = false
            return p
        }
        #expect(frames.map(\.data.count) == [1091, 351])  // the last frame waits for a next timestamp
    }

    @Test func secondFrameFinishedByTheSamePacketComesFromTakeReadyFrame() {
        var d = VP8Depacketizer()
        let a = RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 100, ssrc: 1, payload: [0x10, 0x00, 0x01])
        let b = RTPPacket(
            marker: true, payloadType: 96, sequenceNumber: 2, timestamp: 200, ssrc: 1,
            payload: [0x10, 0x01, 0x02])
        #expect(d.push(a, afterLoss: false) == nil)
        #expect(d.push(b, afterLoss: false) == EncodedFrame(data: [0x00, 0x01], rtpTimestamp: 100, isKeyframe: true))
        #expect(d.takeReadyFrame() == EncodedFrame(data: [0x01, 0x02], rtpTimestamp: 200, isKeyframe: false))
        #expect(d.takeReadyFrame() == nil)
    }

    @Test func oversizedFrameIsDropped() {
        var d = VP8Depacketizer(maxFrameBytes: 1000)
        let frames = Self.run(Array(0...7), into: &d)
        #expect(frames.map(\.data.count) == [351])
        #expect(d.droppedFrames == 1)
    }

    @Test func malformedDescriptorDropsTheFrameInProgress() {
        var d = VP8Depacketizer()
        var broken = Self.packets[2]
        broken.payload = [0x90, 0x80]
        #expect(d.push(Self.packets[0], afterLoss: false) == nil)
        #expect(d.push(broken, afterLoss: false) == nil)
        #expect(d.push(Self.packets[3], afterLoss: false) == nil)
        #expect(d.push(Self.packets[5], afterLoss: false) == nil)
        #expect(d.droppedFrames == 1)
    }
}

@Suite struct OpusDepacketizerTests {
    @Test func eachPacketIsOneFrame() throws {
        var d = OpusDepacketizer()
        let packets = try opusCapturedPackets.map { try RTPPacket(bytes: hex($0)) }
        let frames = packets.enumerated().compactMap { d.push($1, afterLoss: $0 == 2) }
        #expect(frames.map(\.data.count) == [69, 55, 54, 34])
        #expect(frames.map(\.rtpTimestamp) == [0x4A3C_B39D, 0x4A3C_B75D, 0x4A3C_BB1D, 0x4A3C_BEDD])
        #expect(frames.map(\.isKeyframe) == [true, true, true, true])
        #expect(frames.map(\.precededByLoss) == [false, false, true, false])
        #expect(frames.first?.data.first == 0x78)  // TOC: config 15 (hybrid FB 20 ms), stereo flag 0
        #expect(frames.first?.data == packets.first?.payload)
    }

    @Test func emptyPayloadIsNotAFrame() {
        var d = OpusDepacketizer()
        #expect(d.push(RTPPacket(payloadType: 111, sequenceNumber: 1, timestamp: 0, ssrc: 1), afterLoss: false) == nil)
        #expect(d.droppedFrames == 0)
    }
}

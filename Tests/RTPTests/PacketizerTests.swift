import Testing
@testable import RTP

@Suite struct VP8PacketizerTests {
    /// Payloads of `frame` as (descriptor + piece, marker).
    func payloads(_ frame: [UInt8], _ p: inout VP8Packetizer) -> [(bytes: [UInt8], last: Bool)] {
        var out: [([UInt8], Bool)] = []
        frame.withUnsafeBytes { raw in
            p.packetize(raw) { d, piece, last in out.append(([d.0, d.1, d.2, d.3] + Array(piece), last)) }
        }
        return out
    }

    @Test func aFrameIsSplitIntoEqualPiecesUnderTheDescriptor() {
        var p = VP8Packetizer(maxPayloadSize: 10, firstPictureID: 0x1234)
        let frame: [UInt8] = Array(0..<13)
        let out = payloads(frame, &p)
        // 6 bytes of room a packet: 3 packets of 5, 4 and 4 bytes.
        #expect(
            out.map(\.bytes) == [
                [0x90, 0x80, 0x92, 0x34, 0, 1, 2, 3, 4],
                [0x80, 0x80, 0x92, 0x34, 5, 6, 7, 8],
                [0x80, 0x80, 0x92, 0x34, 9, 10, 11, 12],
            ])
        #expect(out.map(\.last) == [false, false, true])
        #expect(p.pictureID == 0x1235)
    }

    @Test func thePictureIDWrapsAtFifteenBits() {
        var p = VP8Packetizer(maxPayloadSize: 100, firstPictureID: 0x7FFF)
        #expect(payloads([1], &p).first?.bytes == [0x90, 0x80, 0xFF, 0xFF, 1])
        #expect(payloads([2], &p).first?.bytes == [0x90, 0x80, 0x80, 0x00, 2])
        #expect(payloads([], &p).isEmpty)
    }

    @Test func theDepacketizerPutsTheFrameBackTogether() {
        var p = VP8Packetizer(maxPayloadSize: 1200)
        // A keyframe's first byte has the P bit clear.
        let frame: [UInt8] = [0x50] + (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var d = VP8Depacketizer()
        var got: EncodedFrame?
        for (i, payload) in payloads(frame, &p).enumerated() {
            let packet = RTPPacket(
                marker: payload.last, payloadType: 96, sequenceNumber: UInt16(i), timestamp: 3000, ssrc: 1,
                payload: payload.bytes)
            if let frame = d.push(packet, afterLoss: false) { got = frame }
        }
        #expect(got?.data == frame)
        #expect(got?.isKeyframe == true)
    }
}

@Suite struct H264PacketizerTests {
    static func avcc(_ units: [[UInt8]]) -> [UInt8] {
        units.flatMap { u in [0, 0, UInt8(u.count >> 8), UInt8(u.count & 0xFF)] + u }
    }

    func payloads(_ avcc: [UInt8], sets: (sps: [UInt8], pps: [UInt8])?, max: Int) -> [(bytes: [UInt8], last: Bool)] {
        var out: [([UInt8], Bool)] = []
        avcc.withUnsafeBytes { raw in
            H264Packetizer(maxPayloadSize: max).packetize(avcc: raw, parameterSets: sets) { prefix, n, rest, last in
                out.append((Array([prefix.0, prefix.1].prefix(n)) + Array(rest), last))
            }
        }
        return out
    }

    @Test func smallUnitsGoAloneAndALargeOneInFUAFragments() {
        let idr: [UInt8] = [0x65] + Array(1...9)
        let sei: [UInt8] = [0x06, 5, 5]
        let out = payloads(Self.avcc([sei, idr]), sets: ([0x67, 0x42], [0x68, 0xCE]), max: 6)
        #expect(
            out.map(\.bytes) == [
                [0x67, 0x42],
                [0x68, 0xCE],
                // 9 bytes after the header, 4 a fragment: 3, 3 and 3. FU indicator keeps NRI (0x60) with type 28.
                [0x7C, 0x85, 1, 2, 3],
                [0x7C, 0x05, 4, 5, 6],
                [0x7C, 0x45, 7, 8, 9],
            ])
        #expect(out.map(\.last) == [false, false, false, false, true])
    }

    @Test func aDeltaFrameHasNoParameterSetsAndItsLastSliceCarriesTheMarker() {
        let out = payloads(Self.avcc([[0x41, 1], [0x41, 2]]), sets: nil, max: 100)
        #expect(out.map(\.bytes) == [[0x41, 1], [0x41, 2]])
        #expect(out.map(\.last) == [false, true])
    }

    @Test func aMalformedLengthEndsTheAccessUnitWhereItStands() {
        var bytes = Self.avcc([[0x41, 1]])
        bytes += [0, 0, 0, 50, 0x41]
        let out = payloads(bytes, sets: nil, max: 100)
        #expect(out.map(\.bytes) == [[0x41, 1]])
        #expect(out.first?.last == true)
    }

    @Test func theDepacketizerPutsTheAccessUnitBackTogether() {
        let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1E]
        let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
        let idr: [UInt8] = [0x65, 0x88] + (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7 | 1) }
        var d = H264Depacketizer()
        var got: EncodedFrame?
        for (i, payload) in payloads(Self.avcc([idr]), sets: (sps, pps), max: 1200).enumerated() {
            let packet = RTPPacket(
                marker: payload.last, payloadType: 102, sequenceNumber: UInt16(i), timestamp: 9000, ssrc: 1,
                payload: payload.bytes)
            if let frame = d.push(packet, afterLoss: false) { got = frame }
        }
        let startCode: [UInt8] = [0, 0, 0, 1]
        #expect(got?.data == startCode + sps + startCode + pps + startCode + idr)
        #expect(got?.isKeyframe == true)
    }
}

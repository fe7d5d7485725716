import Testing
import Publishing

@Suite struct VoiceLevelsSEITests {
    @Test func theJSONMatchesTheEventShape() {
        let json = VoiceLevelsSEI.json(
            levels: [("alice", 67), ("bob", 0), ("bad id", 5), ("carol", 140)],
            activeSpeaker: "alice", timeMs: 1200)
        #expect(
            String(decoding: json, as: UTF8.self)
                == #"{"levels":{"alice":67,"bob":0,"carol":100},"activeSpeaker":"alice","time":1200}"#)
        let none = VoiceLevelsSEI.json(levels: [], activeSpeaker: nil, timeMs: 0)
        #expect(String(decoding: none, as: UTF8.self) == #"{"levels":{},"activeSpeaker":null,"time":0}"#)
    }

    @Test func theNALIsAUserDataUnregisteredSEIWithTheUUIDAndPayload() {
        let payload = Array("hi".utf8)
        let nal = VoiceLevelsSEI.nal(payload: payload)
        #expect(nal == [0x06, 5, 18] + Array("CohostVoiceLevel".utf8) + [0x68, 0x69, 0x80])
    }

    @Test func sizesOf255AndMoreUseFFBytes() {
        let nal = VoiceLevelsSEI.nal(payload: [UInt8](repeating: 0x41, count: 300))
        // 316 = 255 + 61.
        #expect(Array(nal[0..<4]) == [0x06, 5, 255, 61])
        #expect(nal.count == 1 + 1 + 2 + 316 + 1)
    }

    @Test func zerosInThePayloadGetEmulationPrevention() {
        let nal = VoiceLevelsSEI.nal(payload: [0, 0, 1, 0, 0, 0])
        #expect(Array(nal.suffix(9)) == [0, 0, 3, 1, 0, 0, 3, 0, 0x80])
    }

    @Test func itGoesBeforeTheFirstSliceAfterParameterSets() {
        let sps: [UInt8] = [0, 0, 0, 2, 0x67, 0xAA], pps: [UInt8] = [0, 0, 0, 2, 0x68, 0xBB]
        let idr: [UInt8] = [0, 0, 0, 3, 0x65, 1, 2]
        let sei: [UInt8] = [0x06, 5, 0x80]
        #expect(VoiceLevelsSEI.inserting(sei, into: sps + pps + idr) == sps + pps + [0, 0, 0, 3] + sei + idr)
        let slice: [UInt8] = [0, 0, 0, 2, 0x41, 9]
        #expect(VoiceLevelsSEI.inserting(sei, into: slice) == [0, 0, 0, 3] + sei + slice)
    }

    @Test func aMalformedAccessUnitIsLeftAlone() {
        let broken: [UInt8] = [0, 0, 0, 9, 0x65, 1]
        #expect(VoiceLevelsSEI.inserting([0x06], into: broken) == broken)
    }
}

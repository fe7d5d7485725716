import Testing
@testable import SRTP
import TestSupport

@Suite struct SRTPSessionTests {
    static let key80 = SRTPKnownAnswerTests.masterKeyAndSalt

    /// An Opus-sized RTP packet: PT 111, seq 0x0102, ts 0x11223344, the given SSRC, 40 payload bytes.
    static func rtpPacket(seq: UInt16 = 0x0102, ssrc: UInt32 = 0x1234_5678) -> [UInt8] {
        rtpPacketBytes(seq: seq, timestamp: 0x1122_3344, ssrc: ssrc, payload: (0..<40).map { UInt8($0) })
    }

    /// A receiver report (PT 201) from SSRC 0x12345678 with no report blocks, then 16 bytes of padding payload.
    static let rtcpPacket: [UInt8] =
        [0x80, 0xc9, 0x00, 0x01, 0x12, 0x34, 0x56, 0x78]
        + [0x81, 0xca, 0x00, 0x03, 0x12, 0x34, 0x56, 0x78, 0x01, 0x04, 0x63, 0x6f, 0x68, 0x6f, 0x00, 0x00]

    static func key(for profile: SRTPProfile) -> [UInt8] {
        (0..<profile.keyLength).map { UInt8(0x40 + $0) }
    }

    /// Tag bytes appended to SRTP (RTP) for each profile.
    static func rtpTagLength(_ profile: SRTPProfile) -> Int {
        switch profile {
        case .aesCm128HmacSha1_80: 10
        case .aesCm128HmacSha1_32: 4
        case .aeadAes128Gcm: 16
        }
    }

    /// Bytes appended to SRTCP: the E-flag/index word plus the tag (80-bit for both AES-CM suites).
    static func rtcpTrailerLength(_ profile: SRTPProfile) -> Int {
        switch profile {
        case .aesCm128HmacSha1_80, .aesCm128HmacSha1_32: 4 + 10
        case .aeadAes128Gcm: 4 + 16
        }
    }

    @Test func profileKeyLengths() {
        #expect(SRTPProfile.aesCm128HmacSha1_80.keyLength == 30)
        #expect(SRTPProfile.aesCm128HmacSha1_32.keyLength == 30)
        #expect(SRTPProfile.aeadAes128Gcm.keyLength == 28)
        #expect(SRTPProfile(rawValue: "AEAD_AES_128_GCM") == .aeadAes128Gcm)
        #expect(SRTPProfile(rawValue: "AES_256_CM_HMAC_SHA1_80") == nil)
    }

    @Test(arguments: SRTPProfile.allCases)
    func rtpProtectThenUnprotectRoundTrips(profile: SRTPProfile) throws {
        let sender = try SRTPSession(profile: profile, masterKeyAndSalt: Self.key(for: profile), direction: .outbound)
        let receiver = try SRTPSession(profile: profile, masterKeyAndSalt: Self.key(for: profile), direction: .inbound)
        let plain = Self.rtpPacket()
        let protected = try sender.protectRTP(plain)
        #expect(protected.count == plain.count + Self.rtpTagLength(profile))
        #expect(Array(protected.prefix(12)) == Array(plain.prefix(12)))  // header stays clear
        #expect(Array(protected[12..<plain.count]) != Array(plain[12...]))  // payload is encrypted
        #expect(try receiver.unprotectRTP(protected) == plain)
    }

    @Test(arguments: SRTPProfile.allCases)
    func rtcpProtectThenUnprotectRoundTrips(profile: SRTPProfile) throws {
        let sender = try SRTPSession(profile: profile, masterKeyAndSalt: Self.key(for: profile), direction: .outbound)
        let receiver = try SRTPSession(profile: profile, masterKeyAndSalt: Self.key(for: profile), direction: .inbound)
        let protected = try sender.protectRTCP(Self.rtcpPacket)
        #expect(protected.count == Self.rtcpPacket.count + Self.rtcpTrailerLength(profile))
        #expect(Array(protected.prefix(8)) == Array(Self.rtcpPacket.prefix(8)))
        // E flag set, SRTCP index 1 (the first protected RTCP packet). RFC 3711 puts the index word
        // before the tag; RFC 7714 (GCM) puts it after, at the very end.
        let n = Self.rtcpPacket.count
        let indexWord = profile == .aeadAes128Gcm ? Array(protected.suffix(4)) : Array(protected[n..<n + 4])
        #expect(indexWord == [0x80, 0x00, 0x00, 0x01])
        #expect(try receiver.unprotectRTCP(protected) == Self.rtcpPacket)
    }

    @Test(arguments: SRTPProfile.allCases)
    func flippedCiphertextBitIsAnAuthFailure(profile: SRTPProfile) throws {
        let sender = try SRTPSession(profile: profile, masterKeyAndSalt: Self.key(for: profile), direction: .outbound)
        let receiver = try SRTPSession(profile: profile, masterKeyAndSalt: Self.key(for: profile), direction: .inbound)
        var tampered = try sender.protectRTP(Self.rtpPacket())
        tampered[20] ^= 0x01
        let error = #expect(throws: SRTPError.self) { try receiver.unprotectRTP(tampered) }
        #expect(error?.status == 7)
        #expect(error?.isAuthFailure == true)
        #expect(error?.isReplay == false)
        #expect(error?.message == "srtp_unprotect: authentication failure")
    }

    @Test func flippedSRTCPBitIsAnAuthFailure() throws {
        let sender = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.key80, direction: .outbound)
        let receiver = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.key80, direction: .inbound)
        var tampered = try sender.protectRTCP(Self.rtcpPacket)
        tampered[10] ^= 0x80
        let error = #expect(throws: SRTPError.self) { try receiver.unprotectRTCP(tampered) }
        #expect(error?.isAuthFailure == true)
    }

    @Test func samePacketTwiceIsAReplay() throws {
        let receiver = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.key80, direction: .inbound)
        let packet = SRTPKnownAnswerTests.srtpCiphertext
        #expect(try receiver.unprotectRTP(packet) == SRTPKnownAnswerTests.rtpPlaintext)
        let error = #expect(throws: SRTPError.self) { try receiver.unprotectRTP(packet) }
        #expect(error == SRTPError(status: 9, message: "srtp_unprotect: replayed packet (index already seen)"))
        #expect(error?.isReplay == true)
        #expect(error?.isAuthFailure == false)
    }

    @Test func sameSRTCPPacketTwiceIsAReplay() throws {
        let receiver = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.key80, direction: .inbound)
        _ = try receiver.unprotectRTCP(SRTPKnownAnswerTests.srtcpCiphertext)
        let error = #expect(throws: SRTPError.self) { try receiver.unprotectRTCP(SRTPKnownAnswerTests.srtcpCiphertext) }
        #expect(error?.isReplay == true)
    }

    @Test func wrongKeyIsAnAuthFailure() throws {
        var wrongKey = Self.key80
        wrongKey[0] ^= 0xff
        let receiver = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: wrongKey, direction: .inbound)
        let error = #expect(throws: SRTPError.self) { try receiver.unprotectRTP(SRTPKnownAnswerTests.srtpCiphertext) }
        #expect(error?.isAuthFailure == true)
        // A failed packet must not poison the stream: the right packet under the right key still works after.
        let right = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.key80, direction: .inbound)
        #expect(try right.unprotectRTP(SRTPKnownAnswerTests.srtpCiphertext) == SRTPKnownAnswerTests.rtpPlaintext)
    }

    @Test func oneInboundSessionAcceptsEverySSRC() throws {
        let sender = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.key80, direction: .outbound)
        let receiver = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.key80, direction: .inbound)
        let audio = Self.rtpPacket(seq: 7, ssrc: 0x1111_1111)
        let video = Self.rtpPacket(seq: 7, ssrc: 0x2222_2222)  // same seq, other SSRC: not a replay
        #expect(try receiver.unprotectRTP(sender.protectRTP(audio)) == audio)
        #expect(try receiver.unprotectRTP(sender.protectRTP(video)) == video)
    }

    @Test func outOfOrderPacketsInsideTheWindowAreAccepted() throws {
        let sender = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.key80, direction: .outbound)
        let receiver = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.key80, direction: .inbound)
        let packets = try (100..<400).map { try sender.protectRTP(Self.rtpPacket(seq: UInt16($0))) }
        #expect(try receiver.unprotectRTP(packets[299]) == Self.rtpPacket(seq: 399))
        // 299 packets behind the newest: outside libsrtp's default 128 window, inside Cohost's 1024.
        #expect(try receiver.unprotectRTP(packets[0]) == Self.rtpPacket(seq: 100))
    }

    @Test func keyOfTheWrongLengthIsRefused() {
        let error = #expect(throws: SRTPError.self) {
            try SRTPSession(profile: .aeadAes128Gcm, masterKeyAndSalt: Self.key80, direction: .inbound)
        }
        #expect(
            error == SRTPError(status: 2, message: "AEAD_AES_128_GCM needs 28 bytes of master key and salt, got 30"))
    }

    @Test func truncatedAndMalformedPacketsAreRefusedBeforeLibsrtp() throws {
        let receiver = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.key80, direction: .inbound)
        #expect(throws: SRTPError(status: 2, message: "RTP packet of 0 bytes is shorter than the 12-byte header")) {
            try receiver.unprotectRTP([])
        }
        #expect(throws: SRTPError(status: 2, message: "not RTP version 2 (version 0)")) {
            try receiver.unprotectRTP([UInt8](repeating: 0, count: 40))
        }
        // Four CSRCs declared (28-byte header) in a 20-byte packet.
        #expect(throws: SRTPError(status: 2, message: "RTP header of 28 bytes runs past the end of the 20-byte packet"))
        {
            try receiver.unprotectRTP([0x84] + [UInt8](repeating: 0, count: 19))
        }
        // Extension header claiming 0xffff words.
        #expect(
            throws: SRTPError(status: 2, message: "RTP header of 262156 bytes runs past the end of the 40-byte packet")
        ) {
            try receiver.unprotectRTP(
                [0x90, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xbe, 0xde, 0xff, 0xff] + [UInt8](repeating: 0, count: 24))
        }
        #expect(throws: SRTPError(status: 2, message: "RTCP packet of 4 bytes is shorter than the 8-byte header")) {
            try receiver.unprotectRTCP([0x80, 0xc9, 0, 1])
        }
        #expect(throws: SRTPError(status: 2, message: "packet of 65536 bytes exceeds 65535")) {
            try receiver.unprotectRTP([0x80] + [UInt8](repeating: 0, count: 65_535))
        }
        // Header intact but no room for the 10-byte tag: libsrtp's own check answers.
        let short = #expect(throws: SRTPError.self) {
            try receiver.unprotectRTP(Array(SRTPKnownAnswerTests.srtpCiphertext.prefix(14)))
        }
        #expect(short?.isAuthFailure == false && short?.status != 0)
    }

    @Test func sessionsRefuseTheOtherDirection() throws {
        let receiver = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.key80, direction: .inbound)
        #expect(throws: SRTPError(status: 2, message: "protectRTP needs an outbound session; this one is inbound")) {
            try receiver.protectRTP(Self.rtpPacket())
        }
        let sender = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.key80, direction: .outbound)
        #expect(throws: SRTPError(status: 2, message: "unprotectRTCP needs an inbound session; this one is outbound")) {
            try sender.unprotectRTCP(Self.rtcpPacket)
        }
    }
}

/// The hot path unprotects into one kept buffer per socket: no array per packet.
@Suite struct SRTPReuseTests {
    @Test func unprotectIntoAKeptBufferReusesItAndMatchesTheReturningForm() throws {
        let key = SRTPSessionTests.key(for: .aesCm128HmacSha1_80)
        let sender = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: key, direction: .outbound)
        let receiver = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: key, direction: .inbound)
        let check = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: key, direction: .inbound)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(2048)
        let storage = buffer.withUnsafeBufferPointer { $0.baseAddress }
        for seq: UInt16 in 1...5 {
            let plain = SRTPSessionTests.rtpPacket(seq: seq)
            let protected = try sender.protectRTP(plain)
            try receiver.unprotectRTP(protected, into: &buffer)
            #expect(buffer == plain)
            #expect(try check.unprotectRTP(protected) == plain)
            #expect(buffer.withUnsafeBufferPointer { $0.baseAddress } == storage)
        }
        // A replay fails with the buffer emptied, not holding a stale packet.
        let replayed = try sender.protectRTP(SRTPSessionTests.rtpPacket(seq: 9))
        try receiver.unprotectRTP(replayed, into: &buffer)
        #expect(throws: SRTPError.self) { try receiver.unprotectRTP(replayed, into: &buffer) }
        #expect(buffer.isEmpty)
    }
}

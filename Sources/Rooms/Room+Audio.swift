import Foundation
import Media
import Mixing
import Publishing

// The audio tick: every 20 ms, each voice's next block is mixed and encoded, the voice meters and the outputs'
// controllers advance, and a room left with nobody and no output parks its schedules. Confined to `queue`.
extension Room {
    /// Mixes and encodes the block of tick `index`, and those of any ticks the clock skipped before it: a skipped
    /// block left unread would stay in every voice's FIFO and delay it by 20 ms, while the programme's sound,
    /// stamped by the blocks encoded, fell 20 ms behind its pictures, stamped by the tick (both for good).
    /// On `queue`; `now` is injected by tests.
    func audioTick(_ index: Int64, nowMs now: Int64 = Clock.nowMs()) {
        // Refilled in place every tick (hot path: the `participants` getter builds a new array).
        lock.withLock {
            tickParticipants.removeAll(keepingCapacity: true)
            for userId in joinOrder { if let p = members[userId] { tickParticipants.append(p) } }
        }
        let count = tickParticipants.count
        if inputBlocks.count < count {
            inputBlocks.append(contentsOf: Array(repeating: [Float](repeating: 0, count: AudioFormat.blockFrames * 2),
                                                 count: count - inputBlocks.count))
        }
        // Receiver reports once a second (a skipped multiple of 50 counts); keyframe requests, NACKs when due.
        let reportDue = lastAudioTick.map { $0 / 50 != index / 50 } ?? (index % 50 == 0)
        for p in tickParticipants {
            if case .firstVideoFrame(let w, let h)? = p.drain(nowMs: now) {
                events.publish(.firstVideoFrame(userId: p.userId, width: w, height: h))
            }
            feedbackBytes.removeAll(keepingCapacity: true)
            p.feedback(nowMs: now, serverSSRC: serverSSRC, reportDue: reportDue, into: &feedbackBytes)
            if !feedbackBytes.isEmpty { sendFeedback(p, feedbackBytes, &protectedFeedback) }
        }
        var first = index
        if let last = lastAudioTick, index > last + 1 {
            let missed = index - last - 1
            if missed <= Self.maxCatchUpBlocks {
                first = last + 1
                audioBlocksCaughtUp += Int(missed)
            } else {
                audioGaps += 1
                programme.restartAudioTimeline()
            }
            logger.debug("audio clock skipped ticks", metadata: ["room": "\(name)", "ticks": "\(missed)",
                                                                 "caughtUp": "\(first < index)"])
        }
        lastAudioTick = index
        for tick in first...index { mixNextBlock(tick: tick, nowMs: now, catchingUp: first < index) }
        voiceTick(present: tickParticipants, nowMs: now)
        outputTicks(nowMs: now)
        if !programme.hasOutputs {
            // Under `lock`, so a join cannot slip in between the check and the parking (it clears the flag after).
            // Not while a departure waits for the next voice tick (its meter and active speaker must go first).
            let park = lock.withLock { () -> Bool in
                guard members.isEmpty && departedVoices.isEmpty, ticksParked.setIfClear() else { return false }
                clock?.park(clockTokens)
                return true
            }
            if park {
                lastAudioTick = nil  // the ticks after waking are no skipped ones
                goIdle()
            }
        }
        // No participant is kept past its tick (the storage is: no local copy shares it, so this is in place).
        tickParticipants.removeAll(keepingCapacity: true)
    }

    /// One 20 ms block of every voice, mixed and encoded as the block of `tick`.
    private func mixNextBlock(tick: Int64, nowMs now: Int64, catchingUp: Bool) {
        mixInputs.removeAll(keepingCapacity: true)
        for i in tickParticipants.indices {
            let p = tickParticipants[i]
            let (ok, gain) = p.pullAudio(into: &inputBlocks[i], nowMs: now, catchingUp: catchingUp)
            if ok {
                mixInputs.append(MixInput(samples: inputBlocks[i], gain: gain))
                voice.add(userId: p.userId, block: inputBlocks[i], gain: gain, nowMs: now)
            } else {
                voice.addSilence(userId: p.userId, nowMs: now)
            }
        }
        // The mix goes only to the outputs (the meters take each voice alone): with none, nothing is mixed.
        if programme.hasOutputs { mixer.mix(mixInputs, into: &mixBlock) }
        programme.encodeAudio(mixBlock, tick: tick)
    }

    /// Levels every 200 ms (event + FLV message), `active_speaker` when it changes.
    private func voiceTick(present: [Participant], nowMs now: Int64) {
        for userId in departedVoices.take() { voice.remove(userId: userId) }
        let (report, changed) = voice.endTick(present: present, nowMs: now)
        if let changed { events.publish(.activeSpeaker(userId: changed)) }
        // An empty room has no levels to tell: it sends nothing (and costs nothing here).
        guard report, !present.isEmpty else { return }
        programme.sendVoiceLevels(voice.levels, activeSpeaker: voice.activeSpeaker)
        // Nobody listening: skip building the JSON.
        if events.hasListeners {
            events.publish(.voiceLevels(voice.levels.map { VoiceLevel(userId: $0.userId, level: $0.level) },
                                        activeSpeaker: voice.activeSpeaker))
        }
        publishedVoice.store(voice.levels, activeSpeaker: voice.activeSpeaker)
    }

    /// Output status events every `statusIntervalMs` (the programme keeps the cadence and runs the controllers).
    private func outputTicks(nowMs now: Int64) {
        let statuses = programme.outputTick(nowMs: now)
        guard !statuses.isEmpty else { return }
        let bitrate = programme.currentBitrateKbps
        for (output, status) in statuses {
            events.publish(.outputStatus(output: output.id, url: redactedURL(output.url), status: status, bitrate: bitrate))
        }
    }
}

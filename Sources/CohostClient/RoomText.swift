import CohostAPI
import Foundation
import Layout

/// Rooms as a person reads them: `cohost room list` and `cohost room show`.
public enum RoomText {
    public static func list(_ rooms: [RoomInfo]) -> String {
        var table = Table(["NAME", "PARTICIPANTS", "OUTPUTS", "CANVAS", "LAYOUT"])
        for room in rooms {
            table.add([
                room.name, "\(room.participants.count)", "\(room.outputs.count)", canvas(room),
                room.layout.mode.rawValue,
            ])
        }
        return table.render()
    }

    /// The room's settings, then its participants and outputs (each table only when there are some).
    public static func show(_ room: RoomInfo) -> String {
        var block = Table()
        block.add(["name", room.name])
        if room.audioOnly {
            block.add(["canvas", "none (audio only)"])
        } else {
            block.add(["canvas", "\(canvas(room)), background \(room.canvas.background)"])
        }
        if let video = room.video {
            block.add(["video", "\(video.bitrate) kbit/s, \(video.profile) profile, keyframe every \(video.keyint) s"])
        }
        block.add(["audio", "\(room.audio.bitrate) kbit/s, \(room.audio.channels == 1 ? "mono" : "stereo")"])
        block.add(["layout", LayoutText.summary(room.layout)])
        if let anchor = room.anchor { block.add(["anchor", anchor]) }
        if let speaker = room.activeSpeaker { block.add(["speaking", speaker]) }
        block.add(["participants", "\(room.participants.count) of \(room.maxParticipants)"])
        block.add(["outputs", "\(room.outputs.count)"])
        var parts = [block.render()]
        if !room.participants.isEmpty { parts.append(ParticipantText.list(room.participants)) }
        if !room.outputs.isEmpty { parts.append(OutputText.list(room.outputs)) }
        return parts.joined(separator: "\n\n")
    }

    /// `1280x720@30`, or `audio only`.
    static func canvas(_ room: RoomInfo) -> String {
        room.audioOnly ? "audio only" : "\(room.canvas.width)x\(room.canvas.height)@\(room.canvas.fps)"
    }
}

/// A layout as a person reads it: `cohost room layout`.
public enum LayoutText {
    public static func show(_ layout: Layout) -> String {
        var block = Table()
        block.add(["mode", layout.mode.rawValue])
        if let anchor = layout.anchor { block.add(["anchor", anchor]) }
        guard !layout.regions.isEmpty else { return block.render() }
        var regions = Table(["USER", "X", "Y", "WIDTH", "HEIGHT", "Z", "FIT", "ALPHA"])
        for r in layout.regions {
            regions.add([
                r.userId, "\(r.x)", "\(r.y)", "\(r.width)", "\(r.height)", "\(r.z)", r.fit.rawValue,
                Format.number(r.alpha),
            ])
        }
        return block.render() + "\n\n" + regions.render()
    }

    /// `custom, 2 regions`; `pip, anchor alice`.
    static func summary(_ layout: Layout) -> String {
        var text = layout.mode.rawValue
        if let anchor = layout.anchor { text += ", anchor \(anchor)" }
        if !layout.regions.isEmpty { text += ", \(layout.regions.count) region\(layout.regions.count == 1 ? "" : "s")" }
        return text
    }
}

/// Participants as a person reads them: `cohost participant list`.
public enum ParticipantText {
    public static func list(_ participants: [RoomInfo.ParticipantInfo]) -> String {
        var table = Table(["USER", "ADMIN", "MUTED", "GAIN", "LEVEL", "JOINED", "STREAMS"])
        for p in participants {
            let streams = p.streams.map { s in
                s.kind == "video"
                    ? "video \(s.codec) \(s.fps) fps \(s.kbps) kbps" : "\(s.kind) \(s.codec) \(s.kbps) kbps"
            }
            table.add([
                p.userId, Format.yesNo(p.admin), Format.yesNo(p.muted), Format.number(Double(p.gain)), "\(p.level)",
                p.joinedAt,
                streams.isEmpty ? "-" : streams.joined(separator: ", "),
            ])
        }
        return table.render()
    }
}

/// Outputs as a person reads them: `cohost output list` and `output add`.
public enum OutputText {
    public static func list(_ outputs: [OutputInfo]) -> String {
        var table = Table(["ID", "STATE", "ATTEMPT", "KBPS", "SENT", "URL", "ERROR"])
        for o in outputs {
            table.add([
                o.id, o.state, "\(o.attempt)", "\(o.kbps)", Format.bytes(o.sentBytes), o.url, o.error ?? "-",
            ])
        }
        return table.render()
    }
}

/// Sources as a person reads them: `cohost source list` and `source add`.
public enum SourceText {
    public static func list(_ sources: [SourceInfo]) -> String {
        var table = Table(["USER", "STATE", "ATTEMPT", "AUDIO", "VIDEO", "URL", "ERROR"])
        for s in sources {
            table.add([
                s.userId, s.state, "\(s.attempt)", s.audio.map(Format.yesNo) ?? "-", s.video.map(Format.yesNo) ?? "-",
                s.url, s.error ?? "-",
            ])
        }
        return table.render()
    }
}

enum Format {
    static func yesNo(_ value: Bool) -> String { value ? "yes" : "no" }

    /// 1, 0.5, 1.25: no trailing zeros.
    static func number(_ value: Double) -> String {
        let text = String(format: "%.2f", value)
        guard text.contains(".") else { return text }
        var trimmed = Substring(text)
        while trimmed.hasSuffix("0") { trimmed.removeLast() }
        if trimmed.hasSuffix(".") { trimmed.removeLast() }
        return String(trimmed)
    }

    /// 950 B, 12.3 kB, 4.1 MB (powers of 1000).
    static func bytes(_ count: Int) -> String {
        guard count >= 1000 else { return "\(count) B" }
        var value = Double(count)
        for unit in ["kB", "MB", "GB", "TB"] {
            value /= 1000
            if value < 1000 || unit == "TB" { return String(format: "%.1f", value) + " " + unit }
        }
        return "\(count) B"
    }
}

"""Schemathesis hooks for the hooked run (Tests/Schemathesis/run.sh loads this file through SCHEMATHESIS_HOOKS).

protocol/openapi.yaml says everything a JSON Schema can say about a request. Some rules it cannot say: a picture
must decode as a PNG, an offer must be SDP, a watermark or a layout region must land on the canvas, one number
must not exceed another. Data generated from the schema breaks them at random, Cohost rightly answers 400, and
schemathesis would report "schema-valid request rejected". So in bodies generated as valid (never in the
deliberately invalid ones) these hooks put what a real client sends: a real PNG, a real browser offer, a rectangle
on the smallest canvas, numbers in order. Every repair keeps the body valid against the schema. They also keep
the run from colliding with itself the way no client would: each offer brings SSRCs of its own (409 ssrc_conflict
otherwise), each file output a new file name (400 output_path_forbidden for one that exists), and in sequences
each room created a name of its own (409 room_exists for a name an earlier phase took).

Besides: the SDP media types go out as text, and requests carry the admin token, but joins in sequences a
participant's (RoomTokens).
"""

import base64
import hashlib
import hmac
import itertools
import json
import os
import pathlib
import re
import struct
import time
import zlib

import schemathesis
from schemathesis.core import NOT_SET
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.meta import TestPhase

HERE = pathlib.Path(__file__).resolve().parent


# ------------------------------------------------------------------------------------------------ tokens

# run.sh passes the admin token (minted by `cohost token`, room "*") and the key it was signed with.
ADMIN_TOKEN = os.environ["COHOST_SCHEMATHESIS_ADMIN_TOKEN"]
KEY = os.environ["COHOST_SCHEMATHESIS_KEY"]
SECRET = os.environ["COHOST_SCHEMATHESIS_SECRET"]
GUEST = "schemathesis-guest"
ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
JOINS = {("POST", "/v1/rooms/{room}/participants"), ("POST", "/whip/{room}")}


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def guest_token(room):
    """A participant token for `room`, as RoomToken.mint makes it (sorted claims, HS256)."""
    now = int(time.time())
    claims = {"admin": False, "exp": now + 600, "iat": now, "iss": KEY, "room": room, "sub": GUEST}
    signing_input = _b64url(b'{"alg":"HS256","typ":"JWT"}') + "." + _b64url(
        json.dumps(claims, sort_keys=True, separators=(",", ":")).encode("utf-8"))
    mac = hmac.new(SECRET.encode("utf-8"), signing_input.encode("ascii"), hashlib.sha256).digest()
    return signing_input + "." + _b64url(mac)


@schemathesis.auth(refresh_interval=None)
class RoomTokens:
    """The admin token, but a participant token for the room on joins in the stateful phase.

    An admin's join creates a missing room. In the stateful phase a room closed by DELETE and joined afterwards
    would come back, and schemathesis would count it as a deleted resource still served; a participant's join
    to a missing room is 404 (run.sh leaves auto_create_rooms off), as a guest meets it. Elsewhere admin joins
    are what make rooms with participants out of generated names.
    """

    def get(self, case, context):
        room = (case.path_parameters or {}).get("room")
        join = (case.method.upper(), case.operation.path) in JOINS
        if join and _phase(case) == TestPhase.STATEFUL and isinstance(room, str) and ID.fullmatch(room):
            return guest_token(room)
        return ADMIN_TOKEN

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"


# ------------------------------------------------------------------------------------------------ serialization

SDP_TYPES = ("application/sdp", "application/trickle-ice-sdpfrag")


@schemathesis.serializer(*SDP_TYPES)
def sdp_text(ctx, value):
    """SDP is text, sent as it is."""
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogatepass")


@schemathesis.hook
def filter_case(context, case):
    """A text body cannot carry a non-string: on the wire it would be some text, which the schema allows."""
    if case.media_type in SDP_TYPES and case.body is not NOT_SET and not isinstance(case.body, (str, bytes)):
        return False
    return True


# ------------------------------------------------------------------------------------------------ realistic values

def _png(width, height):
    """An 8-bit RGBA PNG, a red-to-blue gradient at half opacity."""
    rows = b"".join(
        b"\x00" + b"".join(bytes((255 * x // max(1, width - 1), 0, 255 * y // max(1, height - 1), 128))
                           for x in range(width))
        for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


PNG_BASE64 = base64.b64encode(_png(8, 4)).decode("ascii")

# A browser's WebRTC offer (Chromium, audio and video, send only: Cohost sends nothing back to it). Every use gets
# SSRCs of its own.
OFFER = (HERE.parent / "WebRTC" / "samples" / "chromium-offer-sendonly.sdp").read_bytes().decode("utf-8")  # CRLF kept
_ssrcs = itertools.count(0x43000000)


def fresh_offer():
    mapping = {}

    def renumber(match):
        old = match.group(0)
        if old not in mapping:
            mapping[old] = str(next(_ssrcs))
        return mapping[old]

    def line(match):
        return re.sub(r"\d+", renumber, match.group(0))

    return re.sub(r"^a=ssrc(?:-group:FID)?[: ][\d ]+", line, OFFER, flags=re.MULTILINE)


_restarts = itertools.count()


def ice_restart_fragment():
    """RFC 9725 §4.3.2: new credentials restart ICE (200 with Cohost's new ones)."""
    n = next(_restarts)
    return f"a=ice-ufrag:rs{n:04d}\r\na=ice-pwd:schemathesisrestartpassword{n:04d}\r\n"


_files = itertools.count(1)


# ------------------------------------------------------------------------------------------------ repairs

# The smallest canvas a room can have (canvas.width/height minimum 16): on it, everything is on every canvas.
MIN_CANVAS = 16


def _int(value, default=None):
    """A JSON integer as generated (schemathesis may write 3 as 3.0); `default` for null, absent or anything else."""
    if isinstance(value, bool) or value is None:
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return default


def _dict(value):
    return value if isinstance(value, dict) else {}


def _even_visible(x, width):
    """Pixels of a span left on the smallest canvas once clipped and snapped to even pixels (Rect.evenAligned)."""
    start, end = max(x, 0), min(x + width, MIN_CANVAS)
    if end <= start:
        return 0
    start &= ~1
    return (end - start) & ~1


def _region(region):
    """A layout region showing at least 2×2 pixels of any canvas."""
    x, y, w, h = (_int(region.get(k)) for k in ("x", "y", "width", "height"))
    if None in (x, y, w, h):
        return
    if _even_visible(x, w) < 2:
        region["x"], region["width"] = 0, max(w, 2)
    if _even_visible(y, h) < 2:
        region["y"], region["height"] = 0, max(h, 2)


def _watermark(mark):
    if not isinstance(mark, dict):
        return
    if isinstance(mark.get("image"), str):
        mark["image"] = PNG_BASE64
    x, y, w, h = (_int(mark.get(k)) for k in ("x", "y", "width", "height"))
    if None in (x, y, w, h):
        return
    # Overlapping the smallest canvas is overlapping every canvas.
    if not (x < MIN_CANVAS and x + w > 0):
        mark["x"] = 0
    if not (y < MIN_CANVAS and y + h > 0):
        mark["y"] = 0


def _layout(layout):
    if isinstance(layout, dict) and isinstance(layout.get("regions"), list):
        for region in layout["regions"]:
            if isinstance(region, dict):
                _region(region)


def _output(output):
    if not isinstance(output, dict):
        return
    url = output.get("url")
    if isinstance(url, str):
        if url[:7].lower() == "file://":
            # A new file in the recordings directory each time: one that exists is 400 output_path_forbidden.
            output["url"] = f"file://schemathesis-{next(_files)}.flv"
        elif any(c.isspace() or c == "\0" for c in url) or len(url.encode("utf-8", "surrogatepass")) >= 2048:
            output["url"] = "rtmp://127.0.0.1:1935/live/schemathesis"
    if output.get("kind") == "hls":
        # A part is 0 (plain HLS) or 0.1 s up to half a segment.
        segment = output.get("segmentSeconds")
        segment = segment if isinstance(segment, (int, float)) and not isinstance(segment, bool) else 2
        part = output.get("partSeconds")
        if isinstance(part, (int, float)) and not isinstance(part, bool) and part != 0:
            output["partSeconds"] = min(max(part, 0.1), segment / 2)
    backoff = output.get("backoff")
    if isinstance(backoff, dict):
        first = _int(backoff.get("initialMaxMs"), 2000)
        last = _int(backoff.get("maxMs"), 10000)
        if last < first:
            backoff["maxMs"] = first


PRESETS = {  # name: (width, height, fps, kbit/s), as in Sources/Rooms/Config/RoomConfigRequest.swift
    "low1": (272, 480, 24, 128), "low2": (272, 480, 24, 256), "low3": (272, 480, 24, 512),
    "medium1": (368, 640, 24, 512), "medium2": (368, 640, 24, 768), "medium3": (368, 640, 24, 1024),
    "high1": (720, 1280, 24, 1024), "high2": (720, 1280, 24, 1280), "high3": (720, 1280, 24, 1536),
}


def _room(body):
    canvas, video = _dict(body.get("canvas")), _dict(body.get("video"))
    _, _, fps, bitrate = PRESETS.get(video.get("preset"), (1280, 720, 30, 2000))
    fps = _int(canvas.get("fps"), fps)
    bitrate = _int(video.get("bitrate"), bitrate)
    for key in ("backgroundImage", "placeholderImage"):
        if isinstance(canvas.get(key), str):
            canvas[key] = PNG_BASE64
    _watermark(body.get("watermark"))
    # video.minBitrate is at most the bitrate in force.
    if _int(video.get("minBitrate"), 0) > bitrate:
        video["minBitrate"] = bitrate
    size = _dict(body.get("maxVideoSize"))
    w, h = _int(size.get("width")), _int(size.get("height"))
    if w is not None and h is not None and w * h > 4096 * 2304:
        size["height"] = 4096 * 2304 // w
    view = _dict(body.get("returnVideo"))
    if _int(view.get("fps"), 0) > fps:
        view["fps"] = fps
    w, h = _int(view.get("width")), _int(view.get("height"))
    if w is not None and h is not None and w * h > 1920 * 1080:
        view["height"] = (1920 * 1080 // w) & ~1
    _layout(body.get("layout"))
    if isinstance(body.get("outputs"), list):
        # At most one HLS output per room.
        hls = [o for o in body["outputs"] if isinstance(o, dict) and o.get("kind") == "hls"]
        body["outputs"] = [o for o in body["outputs"] if o not in hls[1:]]
        for output in body["outputs"]:
            _output(output)


def _room_patch(body):
    for key in ("backgroundImage", "placeholderImage"):
        if isinstance(body.get(key), str):
            body[key] = PNG_BASE64
    _watermark(body.get("watermark"))
    _layout(body.get("layout"))
    # A running room keeps its frame rate, which the schema cannot know (409 canvas_fixed).
    if isinstance(body.get("canvas"), dict):
        body["canvas"].pop("fps", None)


_patches = itertools.count()


def _whip_patch(case):
    # Every other valid fragment restarts ICE; the rest (whatever was generated) only trickles.
    if next(_patches) % 2 == 0:
        case.body = ice_restart_fragment()


_names = itertools.count(1)


def _create_room(case):
    if not isinstance(case.body, dict):
        return
    _room(case.body)
    # A sequence starts from a room it created, not from a name an earlier phase took (409 room_exists).
    if _phase(case) == TestPhase.STATEFUL and isinstance(case.body.get("name"), str):
        case.body["name"] = f"{case.body['name'][:56]}.{next(_names):x}"


def _source(body):
    # A valid body's URL must also name a host, and transport goes with rtsp only: rules in words. Repaired to
    # loopback's discard port (refused: the source retries, nothing leaves the machine). A file is repaired to the
    # same: a missing one is 404, which the stateful checks read as the room just created being gone.
    if not isinstance(body, dict):
        return
    url = body.get("url")
    if body.get("listen") is not None:
        for key in ("url", "transport", "loop"):
            body.pop(key, None)
        return
    if body.get("transport") is not None:
        body["url"] = "rtsp://127.0.0.1:9/cam"
    else:
        body["url"] = "rtmp://127.0.0.1:9/live/schemathesis"


REPAIRS = {
    ("POST", "/v1/rooms/{room}/sources"): lambda case: _source(case.body),
    ("POST", "/v1/rooms"): _create_room,
    ("PATCH", "/v1/rooms/{room}"): lambda case: _room_patch(case.body) if isinstance(case.body, dict) else None,
    ("PUT", "/v1/rooms/{room}/layout"): lambda case: _layout(case.body),
    ("POST", "/v1/rooms/{room}/outputs"): lambda case: _output(case.body),
    ("POST", "/v1/rooms/{room}/participants"): lambda case: setattr(case, "body", fresh_offer()),
    ("POST", "/whip/{room}"): lambda case: setattr(case, "body", fresh_offer()),
    ("PATCH", "/whip/{room}/{userId}"): _whip_patch,
}


def _phase(case):
    return case.meta.phase.name if case.meta is not None else None


def _valid(case, location=ParameterLocation.BODY):
    meta = case.meta
    if meta is None:
        return False
    component = meta.components.get(location)
    mode = component.mode if component is not None else meta.generation.mode
    return mode.is_positive


def _valid_body(case):
    return _valid(case)


def _hls_query(case):
    """A blocking playlist reload must name a segment at most two ahead of the playlist (RFC 8216bis §6.2.5.2, else
    400), which the schema cannot say: a valid case plays the playlist without blocking."""
    if isinstance(case.query, dict):
        case.query.pop("_HLS_msn", None)
        case.query.pop("_HLS_part", None)


@schemathesis.hook
def map_case(context, case):
    repair = REPAIRS.get((case.method.upper(), case.operation.path))
    if repair is not None and _valid_body(case):
        repair(case)
    if (case.method.upper(), case.operation.path) == ("GET", "/v1/rooms/{room}/hls/{file}") and _valid(
            case, ParameterLocation.QUERY):
        _hls_query(case)
    return case

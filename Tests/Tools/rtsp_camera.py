#!/usr/bin/python3
"""A test IP camera: GStreamer's RTSP server (gst-rtsp-server) serving H.264 video of one colour and a PCMU tone.

    rtsp_camera.py PORT [--colour 0xAARRGGBB] [--tone HZ] [--user NAME --password SECRET] [--rtp-in UDP_PORT]

Serves rtsp://127.0.0.1:PORT/cam over TCP and UDP (the client chooses). With --rtp-in, the picture is the H.264 RTP
stream arriving on that loopback UDP port (payload type 96, SPS and PPS in band) instead of a colour, and there is no
sound: the bench's camera, whose frames carry a clock. Prints "ready" once listening; runs until killed. Debian's python3-gi and gir1.2-gst-rtsp-server-1.0 (the system Python, not a virtualenv's).
"""
import argparse
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
gi.require_version("GstRtsp", "1.0")
from gi.repository import GLib, Gst, GstRtsp, GstRtspServer  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--colour", default="0xff00ff00")
    parser.add_argument("--tone", type=int, default=600)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--rtp-in", type=int)
    args = parser.parse_args()
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(args.port))
    factory = GstRtspServer.RTSPMediaFactory()
    if args.rtp_in:
        video = (
            "udpsrc address=127.0.0.1 port=%d "
            "caps=\"application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,payload=96\" "
            "! rtph264depay ! h264parse config-interval=-1 "
            "! rtph264pay name=pay0 pt=96 config-interval=1 " % args.rtp_in)
    else:
        video = (
            "videotestsrc is-live=true pattern=solid-color foreground-color=%s "
            "! video/x-raw,width=320,height=240,framerate=30/1 "
            "! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 bitrate=500 "
            "! video/x-h264,profile=constrained-baseline ! rtph264pay name=pay0 pt=96 config-interval=1 " % args.colour)
    # The RTP-fed camera has no sound: with a tone beside it the media would count as seekable (audiotestsrc
    # answers so), and the seek a PLAY then makes fails on udpsrc (503).
    audio = "" if args.rtp_in else (
        "audiotestsrc is-live=true wave=sine freq=%d volume=0.3 ! audioconvert ! audioresample "
        "! audio/x-raw,rate=8000,channels=1 ! mulawenc ! rtppcmupay name=pay1 pt=0 " % args.tone)
    factory.set_launch("( " + video + audio + ")")
    factory.set_shared(True)
    factory.set_protocols(GstRtsp.RTSPLowerTrans.TCP | GstRtsp.RTSPLowerTrans.UDP)
    if args.user:
        auth = GstRtspServer.RTSPAuth()
        token = GstRtspServer.RTSPToken()
        token.set_string(GstRtspServer.RTSP_TOKEN_MEDIA_FACTORY_ROLE, "viewer")
        auth.add_basic(GstRtspServer.RTSPAuth.make_basic(args.user, args.password), token)
        server.set_auth(auth)
        permissions = GstRtspServer.RTSPPermissions()
        permissions.add_permission_for_role("viewer", "media.factory.access", True)
        permissions.add_permission_for_role("viewer", "media.factory.construct", True)
        factory.set_permissions(permissions)
    server.get_mount_points().add_factory("/cam", factory)
    if server.attach(None) == 0:
        print("cannot listen on port %d" % args.port, file=sys.stderr)
        sys.exit(1)
    print("ready", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()

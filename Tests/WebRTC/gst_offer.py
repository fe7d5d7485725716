#!/usr/bin/python3
# Prints the SDP offer GStreamer's webrtcbin creates for an Opus + VP8 sendonly sender: the gstreamer-offer-*.sdp
# samples (samples/SOURCES.md). No ICE gathering happens (no set-local-description), so nothing touches a network.
# usage: /usr/bin/python3 gst_offer.py max-bundle|max-compat|balanced|none   (Debian's python3-gi, python3-gst-1.0,
# gstreamer1.0-plugins-bad, gstreamer1.0-nice)
import sys
import gi
gi.require_version('Gst', '1.0'); gi.require_version('GstWebRTC', '1.0'); gi.require_version('GstSdp', '1.0')
from gi.repository import Gst, GstWebRTC, GstSdp, GLib

policy = sys.argv[1] if len(sys.argv) > 1 else 'max-bundle'
Gst.init(None)
PIPE = f'''
webrtcbin name=w bundle-policy={policy}
audiotestsrc is-live=true wave=sine ! audioconvert ! audioresample ! opusenc ! rtpopuspay !
  application/x-rtp,media=audio,encoding-name=OPUS,payload=111 ! w.
videotestsrc is-live=true ! video/x-raw,width=320,height=240,framerate=15/1 ! videoconvert ! vp8enc deadline=1 ! rtpvp8pay !
  application/x-rtp,media=video,encoding-name=VP8,payload=96 ! w.
'''
pipe = Gst.parse_launch(PIPE)
w = pipe.get_by_name('w')
loop = GLib.MainLoop()
done = False

for pad in w.sinkpads:
    pad.get_property('transceiver').set_property('direction', GstWebRTC.WebRTCRTPTransceiverDirection.SENDONLY)

def on_offer(promise, _):
    global done
    promise.wait()
    reply = promise.get_reply()
    offer = reply.get_value('offer')
    if not done:
        done = True
        sys.stdout.write(offer.sdp.as_text())
        sys.stdout.flush()
    GLib.idle_add(loop.quit)

def on_negotiation_needed(element):
    element.emit('create-offer', None, Gst.Promise.new_with_change_func(on_offer, None))

w.connect('on-negotiation-needed', on_negotiation_needed)
bus = pipe.get_bus(); bus.add_signal_watch()
bus.connect('message::error', lambda b, m: (sys.stderr.write(str(m.parse_error()) + '\n'), loop.quit()))
pipe.set_state(Gst.State.PLAYING)
GLib.timeout_add_seconds(15, loop.quit)
loop.run()
pipe.set_state(Gst.State.NULL)

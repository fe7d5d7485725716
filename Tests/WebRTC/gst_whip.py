#!/usr/bin/python3
# A WHIP publisher made of GStreamer's webrtcbin (what GStreamer's own WHIP clients use): a solid-colour picture
# (VP8) and a sine tone (Opus) sent to Cohost for `seconds`, in the given bundle policy. Prints one JSON line per
# state change ("answer", "ice", "connected", "error", "done") for the test to read.
#
# usage: /usr/bin/python3 gst_whip.py URL TOKEN POLICY [COLOUR] [TONE_HZ] [SECONDS]
#   POLICY: max-bundle | max-compat | balanced | none
# Needs Debian's python3-gi, gir1.2-gst-plugins-bad-1.0, gstreamer1.0-plugins-{base,good,bad}, gstreamer1.0-nice.
# libnice gathers no candidate on a loopback interface: the test gives this namespace a veth with a 127.0.0.x
# address and announces Cohost there (Tests/WebRTC/test_networks.py).
import json
import sys
import urllib.error
import urllib.request

import gi

gi.require_version('Gst', '1.0')
gi.require_version('GstWebRTC', '1.0')
gi.require_version('GstSdp', '1.0')
from gi.repository import GLib, Gst, GstSdp, GstWebRTC  # noqa: E402

url, token, policy = sys.argv[1], sys.argv[2], sys.argv[3]
colour = sys.argv[4] if len(sys.argv) > 4 else 'green'
tone = int(sys.argv[5]) if len(sys.argv) > 5 else 440
seconds = float(sys.argv[6]) if len(sys.argv) > 6 else 20

PATTERNS = {'green': 'solid-color foreground-color=0xff00ff00', 'red': 'solid-color foreground-color=0xffff0000',
            'blue': 'solid-color foreground-color=0xff0000ff'}


def say(kind, **fields):
    sys.stdout.write(json.dumps(dict(event=kind, **fields)) + '\n')
    sys.stdout.flush()


Gst.init(None)
pipe = Gst.parse_launch(f'''
webrtcbin name=w bundle-policy={policy}
audiotestsrc is-live=true wave=sine freq={tone} volume=0.5 ! audioconvert ! audioresample ! opusenc ! rtpopuspay !
  application/x-rtp,media=audio,encoding-name=OPUS,payload=111 ! w.
videotestsrc is-live=true pattern={PATTERNS[colour]} ! video/x-raw,width=320,height=240,framerate=15/1 !
  videoconvert ! vp8enc deadline=1 keyframe-max-dist=30 ! rtpvp8pay !
  application/x-rtp,media=video,encoding-name=VP8,payload=96 ! w.
''')
w = pipe.get_by_name('w')
loop = GLib.MainLoop()
offered = False


def fail(message):
    say('error', message=message)
    loop.quit()


def post(offer_sdp):
    request = urllib.request.Request(url, data=offer_sdp.encode(), method='POST', headers={
        'Content-Type': 'application/sdp', 'Authorization': 'Bearer ' + token})
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors='replace')


def on_gathering(element, _pspec):
    # Cohost is ICE-lite and takes no trickle: the offer goes once every candidate is in it.
    global offered
    if offered or element.get_property('ice-gathering-state') != GstWebRTC.WebRTCICEGatheringState.COMPLETE:
        return
    offered = True
    sdp = element.get_property('local-description').sdp.as_text()
    status, body = post(sdp)
    say('answer', status=status, offer=sdp, answer=body)
    if status != 201:
        return fail(f'WHIP POST answered {status}: {body[:300]}')
    ok, message = GstSdp.SDPMessage.new_from_text(body)
    answer = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, message)
    promise = Gst.Promise.new_with_change_func(on_remote_set, None)
    element.emit('set-remote-description', answer, promise)


def on_remote_set(promise, _):
    promise.wait()
    reply = promise.get_reply()
    if reply is not None and reply.has_field('error'):
        GLib.idle_add(fail, f'set-remote-description: {reply.get_value("error")}')


def on_offer(promise, _):
    promise.wait()
    reply = promise.get_reply()
    offer = reply.get_value('offer') if reply is not None and reply.has_field('offer') else None
    if offer is None:
        # A second negotiation-needed while the first offer is out: the first one stands.
        say('note', message=f'create-offer gave no offer: {reply.to_string() if reply else None}')
        return
    w.emit('set-local-description', offer, Gst.Promise.new())


def on_negotiation_needed(element):
    element.emit('create-offer', None, Gst.Promise.new_with_change_func(on_offer, None))


def on_connection_state(element, _pspec):
    state = element.get_property('connection-state')
    say('state', state=state.value_nick)
    if state == GstWebRTC.WebRTCPeerConnectionState.CONNECTED:
        say('connected')
    elif state == GstWebRTC.WebRTCPeerConnectionState.FAILED:
        fail('connection failed')


for pad in w.sinkpads:
    pad.get_property('transceiver').set_property('direction', GstWebRTC.WebRTCRTPTransceiverDirection.SENDONLY)
w.connect('on-negotiation-needed', on_negotiation_needed)
w.connect('notify::ice-gathering-state', on_gathering)
w.connect('notify::connection-state', on_connection_state)
bus = pipe.get_bus()
bus.add_signal_watch()
bus.connect('message::error', lambda b, m: fail(str(m.parse_error())))
pipe.set_state(Gst.State.PLAYING)
GLib.timeout_add(int(seconds * 1000), loop.quit)
loop.run()
pipe.set_state(Gst.State.NULL)
say('done')

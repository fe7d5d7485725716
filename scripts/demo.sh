#!/usr/bin/env bash
# make demo: a private nginx-rtmp and cohost on free loopback ports, three ffmpeg participants
# (colours and tones) in a custom layout; records 10 s of the pulled programme to demo/out.flv and
# one frame to demo/canvas.png, then stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.build/release/cohost
[[ -x $bin ]] || { echo "build first: make build"; exit 1; }
mkdir -p demo
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, getattr(socket, sys.argv[1])); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' "$1"; }
rtmp_port=$(free_port SOCK_STREAM); http_port=$(free_port SOCK_STREAM)
while :; do rtp_port=$(free_port SOCK_DGRAM); python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', $rtp_port+1))" 2>/dev/null && break; done

mkdir -p "$work/logs"
cat > "$work/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
daemon off; master_process off; pid $work/nginx.pid; error_log $work/logs/error.log;
events {}
rtmp { server { listen 127.0.0.1:$rtmp_port; application live { live on; record off; } } }
CONF
nginx -p "$work" -c "$work/nginx.conf" & pids+=($!)

key=demo secret=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
$bin serve --http 127.0.0.1:$http_port --rtp-port $rtp_port --keys "$key:$secret" --output-hosts 127.0.0.1 --data-dir "$work/data" 2>"$work/logs/cohost.log" & pids+=($!)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$http_port/healthz" >/dev/null && break; sleep 0.2; done

admin=$($bin token --key $key --secret "$secret" --room demo --user producer --admin)
url="rtmp://127.0.0.1:$rtmp_port/live/demo"
curl -sf -X POST "http://127.0.0.1:$http_port/v1/rooms" -H "Authorization: Bearer $admin" -d @- >/dev/null <<JSON
{"name":"demo","canvas":{"width":1280,"height":720,"fps":30,"background":"#202040"},"video":{"keyint":1},
 "layout":{"mode":"custom","regions":[
   {"userId":"red","x":0,"y":0,"width":640,"height":360},
   {"userId":"green","x":640,"y":0,"width":640,"height":360},
   {"userId":"blue","x":320,"y":360,"width":640,"height":360}]},
 "outputs":[{"url":"$url"}]}
JSON

i=0
for spec in red:440 green:660 blue:880; do
  user=${spec%%:*} tone=${spec##*:}; i=$((i+1))
  token=$($bin token --key $key --secret "$secret" --room demo --user "$user")
  printf 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 9 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=ssrc:%d\r\nm=video 9 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\na=ssrc:%d\r\n' $((100+i)) $((200+i)) \
    | curl -sf -X POST "http://127.0.0.1:$http_port/v1/rooms/demo/participants" -H "Authorization: Bearer $token" \
      -H 'Content-Type: application/sdp' --data-binary @- >/dev/null
  ffmpeg -hide_banner -loglevel error -re -f lavfi -i "sine=frequency=$tone:sample_rate=48000" \
    -f lavfi -i "testsrc2=s=320x180:r=15,drawbox=c=$user@0.6:t=fill" \
    -map 1:v -c:v libvpx -deadline realtime -cpu-used 8 -b:v 300k -g 15 -ssrc $((200+i)) -payload_type 96 -f rtp "rtp://127.0.0.1:$rtp_port?pkt_size=1200" \
    -map 0:a -c:a libopus -b:a 64k -ssrc $((100+i)) -payload_type 111 -f rtp "rtp://127.0.0.1:$rtp_port?pkt_size=1200" >/dev/null & pids+=($!)
done

sleep 3
echo "recording 10 s of $url to demo/out.flv"
ffmpeg -hide_banner -loglevel error -rw_timeout 10000000 -i "$url" -t 10 -c copy -y demo/out.flv
ffmpeg -hide_banner -loglevel error -ss 5 -i demo/out.flv -frames:v 1 -y demo/canvas.png
ffprobe -v error -show_entries stream=codec_name,width,height,sample_rate -of compact demo/out.flv
echo "wrote demo/out.flv and demo/canvas.png"

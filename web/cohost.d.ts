// Types of cohost.js, the browser module that joins a Cohost room over WebRTC (docs/client.md).

/** What to send of one kind: true (the default device), false (nothing; the room is still received), a track you
 *  captured yourself (it stays yours: leave() does not stop it), or getUserMedia constraints. */
export type MediaChoice = boolean | MediaStreamTrack | MediaTrackConstraints;

export interface JoinOptions {
  /** The room name, [A-Za-z0-9_.-]{1,64}. */
  room: string;
  /** A room token (protocol/token.md); its `sub` is the user id. */
  token: string;
  /** The API's origin, e.g. "https://cohost.example.com". Default: location.origin. */
  url?: string;
  /** Default true. */
  audio?: MediaChoice;
  /** Default true. */
  video?: MediaChoice;
  /** Open the room's events WebSocket (levels, kicks, who is here). Default true. */
  events?: boolean;
  /** Receive slots, 0–16: each shows another participant's own camera, forwarded as they send it (`track`
   *  events). Default 0 (only the room view). */
  slots?: number;
  /** A screen share to send beside the camera (a track from getDisplayMedia): its own line, marked
   *  `a=content:slides`; others' slots show it with source "screen". */
  screen?: MediaStreamTrack | null;
  /** Join as a monitor (an admin token only): a hidden receiver whose slots show every participant's camera, in no
   *  layout, mix, participant list or event. Default false. */
  monitor?: boolean;
  /** The display name the programme's labels and cards and the participant lists show (1–64 characters); a token
   *  with a `name` claim keeps its own. */
  name?: string;
  /** Send the camera as three simulcast layers (rids q, h, f: quarter, half and full size; libwebrtc sends three
   *  from a 960×540 capture up). Cohost gives each receiver and the mixer the layer it needs, and pauses layers
   *  no one takes (`layers` events, applied here with RTCRtpSender.setParameters). Default false. */
  simulcast?: boolean;
}

/** A participant's stream as slots name it. */
export type StreamSource = "camera" | "screen";

/** Why a call ended (detail.reason of `left` with self true): the server's participant_left reasons, plus
 *  "failed" (the connection failed) and "room_closed". */
export type LeaveReason = "left" | "kicked" | "timeout" | "replaced" | "room_closed" | "failed";

export interface CallEvents {
  /** Every 200 ms: each present participant's voice level, 0–100 (linear in dBov, -60…0). */
  levels: Record<string, number>;
  /** The active speaker changed. */
  activeSpeaker: string;
  /** Someone else is in the room (also those already there, from the first levels). */
  joined: { userId: string; name: string | null };
  /** Someone left; `self` true: you are out of the room and the call is over. */
  left: { userId: string | null; reason: LeaveReason | string; self: boolean };
  /** An admin removed you (`by` is the admin's user id); `left` with reason "kicked" follows. */
  kicked: { by: string };
  /** The RTCPeerConnection's connectionState ("closed" once the call is over). */
  state: RTCPeerConnectionState;
  /** A slot starts showing `userId`'s stream: play `stream` (the slot's; the picture comes with the next keyframe). */
  track: { userId: string; source: StreamSource; mid: string; stream: MediaStream };
  /** A slot stops showing `userId`'s stream (another takes its place, or none). */
  trackEnded: { userId: string; source: StreamSource; mid: string };
  /** Someone said their camera or microphone is on or off. */
  updated: { userId: string; camera: boolean; microphone: boolean };
  /** Cohost asked to stop (or start again) simulcast layers of your camera, and they were: the RIDs paused now. */
  layers: { paused: string[] };
  /** A TURN server refused the credentials (code 401) or could not be reached, while connecting (also kept in
   *  `relayErrors`: most come while join() gathers). */
  relayError: { url: string; code: number; text: string };
}

export declare class Call extends EventTarget {
  readonly pc: RTCPeerConnection;
  readonly room: string;
  /** The token's sub. */
  readonly userId: string | null;
  /** What you send: the tracks given or captured. */
  readonly localStream: MediaStream;
  /** What Cohost sends back: the room's mix without your voice, and the room view. Play it unmuted. */
  readonly remoteStream: MediaStream;
  /** The others present, as the events told. */
  readonly participants: Set<string>;
  /** Each receive slot's MediaStream, by mid. */
  readonly slotStreams: Map<string, MediaStream>;
  /** What each slot shows now, by mid. */
  readonly slots: Map<string, { userId: string; source: StreamSource }>;
  readonly muted: { audio: boolean; video: boolean };
  /** True once the call is over. */
  readonly ended: boolean;

  /** Calls fn with each `name` event's detail; returns a function that removes it. */
  on<K extends keyof CallEvents>(name: K, fn: (detail: CallEvents[K]) => void): () => void;
  /** Leaves: closes the PeerConnection (Cohost removes the participant on the DTLS close_notify at once); before the
   *  connection is up, also DELETEs the participant with the token. */
  leave(): void;
  muteAudio(): void;
  unmuteAudio(): void;
  muteVideo(): void;
  unmuteVideo(): void;
  /** Mutes here and tells the room (the others see a camera-off card; the voice leaves the mix). */
  setMuted(kind: "audio" | "video", muted: boolean): void;
  /** Chooses what slots show, `{ [mid]: userId }`; the slots not named stay automatic. */
  subscribe(choices: Record<string, string>): Promise<{ slots: object[]; chosen: object[] }>;
  /** The largest picture wanted in a slot (its tile's size in device pixels; null: no limit): of a simulcast
   *  sender, the layer covering it is sent. Resolves to the server's answer, or undefined when nothing changed. */
  setSlotSize(
    mid: string,
    size: { width: number; height: number } | null,
  ): Promise<{ slots: object[]; chosen: object[] } | undefined>;
  /** setSlotSize for several slots in one request, `{ [mid]: size | null }`. */
  setSlotSizes(
    sizes: Record<string, { width: number; height: number } | null>,
  ): Promise<{ slots: object[]; chosen: object[] } | undefined>;
  /** The camera's simulcast layers Cohost asked to pause (their RIDs). */
  readonly pausedLayers: string[];
  /** The TURN errors seen while connecting (the relayError events' details). */
  readonly relayErrors: { url: string; code: number; text: string }[];
  /** Applies a `slots` event about this call: `trackEnded` and `track` for what changed. */
  updateSlots(slots: { mid: string; userId?: string; source?: StreamSource }[]): void;
  /** Reads what the slots show now (once the events socket is open). */
  readSlots(): Promise<void>;
  /** Sends `track` in place of the current one of its kind (another device), without a new offer. It takes the
   *  call's mute state. Resolves to the track replaced (yours to stop), or null. */
  replaceTrack(track: MediaStreamTrack): Promise<MediaStreamTrack | null>;

  /** join() makes the Call; a page has no need to. `owned`: the tracks join() captured (stopped when the call ends). */
  constructor(
    pc: RTCPeerConnection,
    init: {
      room: string;
      token: string;
      base: string;
      localStream: MediaStream;
      owned: MediaStreamTrack[];
      userId: string | null;
    },
  );
  /** Dispatches `name` as a CustomEvent with `detail` (what on() listeners get). */
  emit<K extends keyof CallEvents>(name: K, detail: CallEvents[K]): void;
  /** The RTCRtpSender of the transceiver for `kind`, or null. */
  sender(kind: "audio" | "video"): RTCRtpSender | null;
  /** The tracks of `kind` being sent: the local stream's and the sender's. */
  localTracks(kind: "audio" | "video"): MediaStreamTrack[];
  /** Opens the room's events WebSocket (join() does, unless `events` is false). */
  openEvents(): void;
  /** Applies one message of the events WebSocket (protocol/events.schema.json). */
  handleEvent(event: { type: string; [field: string]: unknown }): void;
  /** Ends the call at once: the PeerConnection, the events socket and the tracks join() captured; unlike leave(),
   *  never DELETEs the participant. Then `state` "closed" and `left` (self) with `reason`; null: neither. */
  close(reason: LeaveReason | string | null): void;
}

/** A refusal of the API (`code` and `status` as the server sent them: protocol/openapi.yaml, protocol/token.md),
 *  "network" (the server could not be reached, status 0), "media" (getUserMedia failed; `cause` is its
 *  DOMException), or "invalid_argument". */
export declare class CohostError extends Error {
  readonly code: string;
  readonly status: number;
}

/** Captures the camera and microphone (unless given tracks), offers, POSTs the offer to
 *  {url}/v1/rooms/{room}/participants, applies the answer, and opens the events socket. Rejects with a
 *  CohostError. */
export function join(options: JoinOptions): Promise<Call>;

export interface WatchOptions {
  room: string;
  /** Any token of the room: a viewer token (claim viewer), a participant's or an admin's. */
  token: string;
  /** The server's origin; default the page's. */
  url?: string;
  /** A <video> element given the programme's stream. */
  video?: HTMLVideoElement | null;
}

export interface WatchSession {
  pc: RTCPeerConnection;
  /** The programme: its mix (Opus) and its pictures (its own H.264). */
  stream: MediaStream;
  /** Ends the session (DELETE of the answer's Location). */
  stop(): Promise<void>;
}

/** Plays a room's programme over WHEP (POST /whep/{room}); nothing is sent. Exported by cohost-watch.js. */
export function watch(options: WatchOptions): Promise<WatchSession>;

/** The STUN and TURN servers (TURN credentials minted for the token) from GET /v1/rooms/{room}/ice-servers, for
 *  an RTCPeerConnection; [] when the server names none or cannot be asked. join() and watch() use it. */
export function iceServers(url: string, room: string, token: string): Promise<RTCIceServer[]>;

/** The claims of a JWT, not verified (for display only), or null. */
export function tokenClaims(token: string): { sub?: string; room?: string; exp?: number; admin?: boolean; [claim: string]: unknown } | null;

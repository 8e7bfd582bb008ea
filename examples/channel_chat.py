#!/usr/bin/env python3
"""A chat room on a reliable channel of liblogosdelivery, from Python with ctypes only.

    python3 channel_chat.py [--fast] <name> <folder> [<port> [<peer address>]]

The same program as channel_chat.c, and the two talk to each other: each line typed is sent on
the channel, messages from the others are printed as "> sender: text", the room's history is kept
in <folder>/history.log and the channel's state in <folder>/channels.sqlite3, so that a
participant started again with the same name and folder resumes the room and receives what it
missed, with nothing twice. --fast asks for missed messages within about a second.
Set LOGOSDELIVERY_LIB to the library's path if it is not on the loader's search path.
"""
import base64
import ctypes
import json
import os
import sys
import threading

CHANNEL = "chat-room"
TOPIC = "/chat/1/channel-room/proto"
RET_OK = 0
FAST = {"sdsRepairTMinMs": 200, "sdsRepairTMaxMs": 1000, "sdsSyncIntervalMs": 1000}

lib = ctypes.CDLL(os.environ.get("LOGOSDELIVERY_LIB", "liblogosdelivery.so.0"))
CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
lib.logosdelivery_create_node.restype = ctypes.c_void_p
lib.logosdelivery_create_node.argtypes = [ctypes.c_char_p, CALLBACK, ctypes.c_void_p]
for name in ("start_node", "stop_node", "destroy"):
    getattr(lib, "logosdelivery_" + name).argtypes = [ctypes.c_void_p, CALLBACK, ctypes.c_void_p]
for name in ("get_node_info", "channel_exists", "channel_close"):
    getattr(lib, "logosdelivery_" + name).argtypes = [
        ctypes.c_void_p, CALLBACK, ctypes.c_void_p, ctypes.c_char_p]
lib.logosdelivery_channel_create.argtypes = [
    ctypes.c_void_p, CALLBACK, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
lib.logosdelivery_channel_send.argtypes = [
    ctypes.c_void_p, CALLBACK, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
lib.waku_connect.argtypes = [
    ctypes.c_void_p, CALLBACK, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint]
lib.logosdelivery_set_event_callback.argtypes = [ctypes.c_void_p, CALLBACK, ctypes.c_void_p]
lib.logosdelivery_set_event_callback.restype = None


class Call:
    """One request: the library answers exactly once, from its own thread."""

    def __init__(self):
        self.done = threading.Event()
        self.ok, self.text = False, ""
        self.callback = CALLBACK(self.answer)

    def answer(self, ret, msg, length, _user_data):
        self.ok = ret == RET_OK
        self.text = ctypes.string_at(msg, length).decode() if msg else ""
        self.done.set()

    def wait(self):
        self.done.wait()
        if not self.ok:
            raise RuntimeError(self.text)
        return self.text


def call(fn, ctx, *args):
    c = Call()
    fn(ctx, c.callback, None, *args)
    return c.wait()


class Room:
    """The history file, written from the library's thread (received) and the main one (sent)."""

    def __init__(self, folder):
        self.lock = threading.Lock()
        self.file = open(os.path.join(folder, "history.log"), "a", encoding="utf-8")

    def remember(self, sender, text):
        with self.lock:
            self.file.write(f"{sender}: {text}\n")
            self.file.flush()


def main():
    args = sys.argv[1:]
    fast = bool(args) and args[0] == "--fast"
    args = args[1:] if fast else args
    if len(args) < 2:
        sys.exit("usage: channel_chat.py [--fast] <name> <folder> [<port> [<peer address>]]")
    name, folder = args[0], args[1]
    port = int(args[2]) if len(args) > 2 else 0
    room = Room(folder)
    config = {
        "messagingOverrides": {
            "p2pTcpPort": port, "clusterId": 42, "numShardsInCluster": 1, "logLevel": "ERROR",
            "localStoragePath": folder},
        "channelsOverrides": FAST if fast else {},
    }

    def on_event(ret, msg, length, _user_data):
        event = json.loads(ctypes.string_at(msg, length))
        if ret == RET_OK and event["eventType"] == "channel_message_received":
            text = base64.b64decode(event["payload"]).decode(errors="replace")
            room.remember(event["senderId"], text)
            print(f"> {event['senderId']}: {text}", flush=True)

    created = Call()
    ctx = lib.logosdelivery_create_node(json.dumps(config).encode(), created.callback, None)
    created.wait()
    events = CALLBACK(on_event)  # kept alive while the node runs
    lib.logosdelivery_set_event_callback(ctx, events, None)
    call(lib.logosdelivery_start_node, ctx)
    print("listening on " + call(lib.logosdelivery_get_node_info, ctx, b"MyMultiaddresses"),
          flush=True)
    if len(args) > 3:  # the peer to join through (the kernel call dials it)
        call(lib.waku_connect, ctx, args[3].encode(), ctypes.c_uint(10000))
    # a channel created again resumes from <folder>/channels.sqlite3
    call(lib.logosdelivery_channel_create, ctx, CHANNEL.encode(), TOPIC.encode(), name.encode())
    print(f"joined {CHANNEL} as {name}", flush=True)
    for line in sys.stdin:
        line = line.rstrip("\n")
        if not line:
            continue
        payload = base64.b64encode(line.encode()).decode()
        call(lib.logosdelivery_channel_send, ctx, CHANNEL.encode(),
             json.dumps({"payload": payload}).encode())
        room.remember(name, line)
    call(lib.logosdelivery_stop_node, ctx)
    destroyed = Call()
    lib.logosdelivery_destroy(ctx, destroyed.callback, None)


if __name__ == "__main__":
    main()

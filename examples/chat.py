#!/usr/bin/env python3
"""A chat over liblogosdelivery from Python, with ctypes only.

    python3 chat.py 60011 <an address another chat printed>

Each line typed is sent on the room's content topic; messages from others are printed.
Set LOGOSDELIVERY_LIB to the library's path if it is not on the loader's search path.
"""
import base64
import ctypes
import json
import os
import sys
import threading

ROOM = "/chat/1/room/proto"
RET_OK = 0

lib = ctypes.CDLL(os.environ.get("LOGOSDELIVERY_LIB", "liblogosdelivery.so.0"))
CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
lib.logosdelivery_create_node.restype = ctypes.c_void_p
lib.logosdelivery_create_node.argtypes = [ctypes.c_char_p, CALLBACK, ctypes.c_void_p]
for name in ("start_node", "stop_node", "destroy"):
    getattr(lib, "logosdelivery_" + name).argtypes = [ctypes.c_void_p, CALLBACK, ctypes.c_void_p]
for name in ("subscribe", "send", "get_node_info"):
    getattr(lib, "logosdelivery_" + name).argtypes = [
        ctypes.c_void_p, CALLBACK, ctypes.c_void_p, ctypes.c_char_p]
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


def on_event(ret, msg, length, _user_data):
    event = json.loads(ctypes.string_at(msg, length))
    if ret == RET_OK and event["eventType"] == "message_received":
        print("> " + bytes(event["message"]["payload"]).decode(errors="replace"), flush=True)


def main():
    port = sys.argv[1] if len(sys.argv) > 1 else "0"
    config = {"tcpPort": int(port), "clusterId": 42, "numShardsInNetwork": 1,
              "discv5Discovery": False, "logLevel": "ERROR", "staticnodes": sys.argv[2:3]}
    created = Call()
    ctx = lib.logosdelivery_create_node(json.dumps(config).encode(), created.callback, None)
    created.wait()
    events = CALLBACK(on_event)  # kept alive while the node runs
    lib.logosdelivery_set_event_callback(ctx, events, None)
    call(lib.logosdelivery_start_node, ctx)
    print("listening on " + call(lib.logosdelivery_get_node_info, ctx, b"MyMultiaddresses"),
          flush=True)
    call(lib.logosdelivery_subscribe, ctx, ROOM.encode())
    for line in sys.stdin:
        payload = base64.b64encode(line.rstrip("\n").encode()).decode()
        call(lib.logosdelivery_send, ctx,
             json.dumps({"contentTopic": ROOM, "payload": payload}).encode())
    call(lib.logosdelivery_stop_node, ctx)
    destroyed = Call()
    lib.logosdelivery_destroy(ctx, destroyed.callback, None)


if __name__ == "__main__":
    main()

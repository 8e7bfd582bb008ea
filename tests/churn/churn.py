#!/usr/bin/env python3
"""Churn test of the Messaging API's reliability, in network namespaces made by the test itself.

N logosdelivery nodes relay on one shard, each alone in a network namespace of its own, joined by
veth pairs to a bridge inside one more namespace (the hub), where this script runs its checks.
Every address lives inside those namespaces (10.77.0.0/16) or on their loopback; nothing is added
to the namespace the script was started in, and everything is deleted at the end.

While P of the nodes (the publishers) publish through the Messaging API's REST endpoint
(POST /messaging/v1/messages) every --publish-interval seconds, a fraction of the other nodes is
restarted every --period seconds for --duration seconds. After the run, and a grace period that
covers both the reliability window and the send retry window, the script checks:

  * every message published during the run reached every node that was up for the whole
    reliability window after it (from the moment its Messaging API subscription was in place
    until at least --window seconds after the publish): "lost" counts the misses;
  * every send got `message_sent` or `message_error` (GET /messaging/v1/events/send on the
    publisher): "unconfirmed" counts those that got neither.

A node's receptions are read from its Message Storage records (GET /messages?contentTopic=…),
once more just before it is stopped. Exit status: 0 pass, 1 fail, 77 skipped (namespaces cannot
be made: not root, no `ip`, or no veth/bridge support), 2 bad usage.

Full form (by hand, as root):   tests/churn/churn.py --bin build/logosdelivery
Short form (CTest):             tests/churn/churn.py --nodes 8 --publishers 4 --period 30 \
                                    --duration 60 --partition 15
Checking the checker:           --reliability off --partition 15: the relay alone loses what is
                                published while a node is cut off, and the verdict must say so.
"""

import argparse
import base64
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

SKIP = 77
SUBNET = "10.77"
HUB_ADDR = SUBNET + ".255.254"
TCP_PORT = 60000
REST_PORT = 8645
CLUSTER = 66
TOPIC = "/churn/1/reliability/proto"
STATIC_PEERS = 3
RETRY_WINDOW_S = 60  # the Messaging API's send retry window (LD_MESSAGING_DEFAULT_RETRY_WINDOW_MS)


def log(msg):
    print("[churn %7.1fs] %s" % (time.monotonic() - T0, msg), flush=True)


T0 = time.monotonic()

# ---- namespaces (outer process, in the caller's namespace) ----------------------------------------


def run(*cmd, check=True):
    return subprocess.run(cmd, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


def node_ns(prefix, i):
    return "%sn%d" % (prefix, i)


def node_ip(i):
    return "%s.%d.%d" % (SUBNET, i // 250, i % 250 + 1)


def make_namespaces(prefix, n):
    hub = prefix + "hub"
    run("ip", "netns", "add", hub)
    run("ip", "-n", hub, "link", "set", "lo", "up")
    run("ip", "-n", hub, "link", "add", "br0", "type", "bridge")
    run("ip", "-n", hub, "addr", "add", HUB_ADDR + "/16", "dev", "br0")
    run("ip", "-n", hub, "link", "set", "br0", "up")
    for i in range(n):
        ns = node_ns(prefix, i)
        run("ip", "netns", "add", ns)
        run("ip", "-n", ns, "link", "set", "lo", "up")
        # both ends are made inside the namespaces: nothing appears in the caller's
        run("ip", "link", "add", "v%d" % i, "netns", hub, "type", "veth", "peer", "name", "eth0",
            "netns", ns)
        run("ip", "-n", hub, "link", "set", "v%d" % i, "master", "br0")
        run("ip", "-n", hub, "link", "set", "v%d" % i, "up")
        run("ip", "-n", ns, "addr", "add", node_ip(i) + "/16", "dev", "eth0")
        run("ip", "-n", ns, "link", "set", "eth0", "up")


def delete_namespaces(prefix):
    out = run("ip", "netns", "list", check=False).stdout
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        if not name.startswith(prefix):
            continue
        pids = run("ip", "netns", "pids", name, check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        run("ip", "netns", "del", name, check=False)


def can_make_namespaces():
    if os.geteuid() != 0:
        return "not root"
    if shutil.which("ip") is None:
        return "no `ip` command (iproute2)"
    probe = "ldchurnprobe%d" % os.getpid()
    try:
        run("ip", "netns", "add", probe + "a")
        run("ip", "netns", "add", probe + "b")
        run("ip", "link", "add", "p0", "netns", probe + "a", "type", "veth", "peer", "name",
            "p1", "netns", probe + "b")
        run("ip", "-n", probe + "a", "link", "add", "br0", "type", "bridge")
        return None
    except subprocess.CalledProcessError as e:
        return "cannot make namespaces, veth pairs or bridges: %s" % e.stderr.strip()
    finally:
        delete_namespaces(probe)


# ---- the run (inner process, in the hub namespace) ------------------------------------------------


def http(method, ip, path, body=None, timeout=5.0):
    url = "http://%s:%d%s" % (ip, REST_PORT, path)
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except (urllib.error.URLError, OSError, TimeoutError):
        return 0, ""


class Node:
    def __init__(self, i, args):
        self.i = i
        self.ip = node_ip(i)
        self.ns = node_ns(args.prefix, i)
        self.key = "%064x" % (0x1000 + i)  # fixed: the peer ID survives restarts
        self.addr = None  # /ip4/…/tcp/…/p2p/… once known
        self.proc = None
        self.lock = threading.Lock()
        self.up_since = None  # subscription in place (monotonic), None while down
        self.intervals = []  # (up_since, down_at) of past incarnations
        self.seen = 0  # records read in this incarnation
        self.received = set()  # payload IDs received, over all incarnations
        self.incarnation = 0
        self.bad_exits = []


class Run:
    def __init__(self, args):
        self.args = args
        self.nodes = [Node(i, args) for i in range(args.nodes)]
        self.publishers = list(range(args.publishers))
        self.restartable = [i for i in range(args.nodes) if i not in self.publishers] or \
            list(range(args.nodes))
        self.rng = random.Random(args.seed)
        self.sends = {}  # payload ID -> {publisher, t, request_id}
        self.send_kinds = {}  # request ID -> set of event kinds
        self.send_failures = 0  # POSTs that did not return a request ID
        self.lock = threading.Lock()
        self.stop_publishing = threading.Event()
        self.stop_polling = threading.Event()

    # ---- nodes ----

    def node_args(self, node, statics):
        a = self.args
        cmd = ["ip", "netns", "exec", node.ns, a.bin,
               "--relay=true", "--cluster-id=%d" % CLUSTER, "--num-shards-in-network=1",
               "--shard=0", "--listen-address=0.0.0.0", "--tcp-port=%d" % TCP_PORT,
               "--rest=true", "--rest-address=0.0.0.0", "--rest-port=%d" % REST_PORT,
               "--metrics-server=false", "--store=false", "--nodekey=" + node.key,
               "--log-level=" + a.log_level]
        for s in statics:
            cmd.append("--staticnode=" + s)
        if a.reliability == "p2p":
            cmd += ["--reliability-mode=p2p", "--reliability-window=%ds" % a.window]
        elif a.reliability == "store":
            cmd += ["--reliability-mode=store"]
        cmd += a.node_arg
        return cmd

    def start(self, node, candidates):
        statics = [self.nodes[j].addr for j in candidates if self.nodes[j].addr]
        statics = self.rng.sample(statics, min(STATIC_PEERS, len(statics)))
        node.incarnation += 1
        logf = open(os.path.join(self.args.workdir, "node%d.%d.log" % (node.i, node.incarnation)),
                    "w")
        node.proc = subprocess.Popen(self.node_args(node, statics), stdout=logf,
                                     stderr=subprocess.STDOUT)
        logf.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if node.proc.poll() is not None:
                raise RuntimeError("node %d exited with %d at start (log %s)" %
                                   (node.i, node.proc.returncode, logf.name))
            st, body = http("GET", node.ip, "/debug/v1/info", timeout=2)
            if st == 200:
                for a in json.loads(body).get("listenAddresses", []):
                    if a.startswith("/ip4/%s/" % node.ip):
                        node.addr = a
                break
            time.sleep(0.2)
        else:
            raise RuntimeError("node %d: REST not ready within 60 s" % node.i)
        st, body = http("POST", node.ip, "/messaging/v1/subscriptions", [TOPIC])
        if st != 200:
            raise RuntimeError("node %d: subscription answered %d %s" % (node.i, st, body))
        with node.lock:
            node.seen = 0
            node.up_since = time.monotonic()

    def stop(self, node):
        self.poll_node(node)  # what it received, before it goes
        with node.lock:
            node.intervals.append((node.up_since, time.monotonic()))
            node.up_since = None
        node.proc.send_signal(signal.SIGTERM)
        try:
            rc = node.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            node.proc.kill()
            rc = node.proc.wait()
        if rc != 0:
            node.bad_exits.append(rc)

    def partition(self, node):
        """Cuts the node off the bridge for a while: its link goes down and its TCP sockets are
        destroyed (`ss -K`), so its connections fail on both sides (a link that is only down
        keeps them, and TCP delivers what waited once it is up again). The process keeps
        running, so it stays up for the verdict."""
        run("ip", "-n", node.ns, "link", "set", "eth0", "down")
        run("ip", "netns", "exec", node.ns, "ss", "-K", "-t", "state", "established")
        time.sleep(self.args.partition)
        run("ip", "-n", node.ns, "link", "set", "eth0", "up")

    def restart(self, node):
        self.stop(node)
        time.sleep(self.args.downtime)
        self.start(node, [j for j in range(len(self.nodes)) if j != node.i])

    # ---- observation ----

    def poll_node(self, node):
        with node.lock:
            if node.up_since is None:
                return
            q = urllib.parse.urlencode({"contentTopic": TOPIC, "skip": node.seen})
            st, body = http("GET", node.ip, "/messages?" + q, timeout=10)
            if st != 200:
                return  # 404: no record yet
            recs = json.loads(body)
            node.seen += len(recs)
            for r in recs:
                if not r.get("received"):
                    continue
                try:
                    text = base64.b64decode(r["message"]["payload"]).decode()
                except (KeyError, ValueError):
                    continue
                node.received.add(text)

    def poll_sends(self, node):
        st, body = http("GET", node.ip, "/messaging/v1/events/send", timeout=10)
        if st != 200:
            return
        with self.lock:
            for s in json.loads(body):
                kinds = self.send_kinds.setdefault(s["requestId"], set())
                for e in s.get("events", []):
                    kinds.add(e.get("kind"))

    def poll_all(self):
        for node in self.nodes:
            self.poll_node(node)
        for p in self.publishers:
            self.poll_sends(self.nodes[p])

    def poller(self):
        while not self.stop_polling.wait(self.args.poll_interval):
            self.poll_all()

    # ---- publishing ----

    def publisher(self, p):
        node = self.nodes[p]
        seq = 0
        next_at = time.monotonic() + self.rng.uniform(0, self.args.publish_interval)
        while not self.stop_publishing.is_set():
            delay = next_at - time.monotonic()
            if delay > 0 and self.stop_publishing.wait(delay):
                break
            next_at += self.args.publish_interval
            text = "churn %d %d" % (p, seq)
            seq += 1
            t = time.monotonic()
            st, body = http("POST", node.ip, "/messaging/v1/messages",
                            {"contentTopic": TOPIC,
                             "payload": base64.b64encode(text.encode()).decode()})
            with self.lock:
                if st == 200:
                    self.sends[text] = {"publisher": p, "t": t,
                                        "request_id": json.loads(body)["requestId"]}
                else:
                    self.send_failures += 1

    # ---- the scenario ----

    def scenario(self):
        a = self.args
        log("starting %d nodes (%s reliability, %d publishers)" %
            (a.nodes, a.reliability, a.publishers))
        for node in self.nodes:
            self.start(node, list(range(node.i)))
        log("warm-up %d s" % a.warmup)
        time.sleep(a.warmup)
        poller = threading.Thread(target=self.poller, daemon=True)
        poller.start()
        pubs = [threading.Thread(target=self.publisher, args=(p,), daemon=True)
                for p in self.publishers]
        start = time.monotonic()
        for t in pubs:
            t.start()
        n_restart = max(1, round(a.fraction * a.nodes))
        n_restart = min(n_restart, len(self.restartable))
        k = 0
        while True:
            at = start + a.period / 2 + k * a.period
            if at - start >= a.duration:
                break
            time.sleep(max(0, at - time.monotonic()))
            chosen = self.rng.sample(self.restartable, n_restart)
            threads = [threading.Thread(target=self.restart, args=(self.nodes[i],))
                       for i in chosen]
            others = [i for i in self.restartable if i not in chosen]
            cut = self.rng.choice(others) if a.partition > 0 and others else None
            if cut is not None:
                threads.append(threading.Thread(target=self.partition, args=(self.nodes[cut],)))
            log("round %d: restarting nodes %s%s" %
                (k + 1, chosen, "" if cut is None else ", cutting node %d off for %d s" %
                 (cut, a.partition)))
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            k += 1
        time.sleep(max(0, start + a.duration - time.monotonic()))
        self.stop_publishing.set()
        for t in pubs:
            t.join()
        self.rounds = k
        grace = max(a.window, RETRY_WINDOW_S) + a.grace
        log("publishing over (%d rounds); grace %d s" % (k, grace))
        time.sleep(grace)
        self.stop_polling.set()
        poller.join()
        self.poll_all()
        end = time.monotonic()
        for node in self.nodes:
            self.stop(node)
        # the last incarnations ended at `end`, not at their stop
        for node in self.nodes:
            s, _ = node.intervals[-1]
            node.intervals[-1] = (s, end)

    def verdict(self):
        a = self.args
        expected = lost = 0
        lost_examples = []
        for text, s in sorted(self.sends.items(), key=lambda kv: kv[1]["t"]):
            for node in self.nodes:
                if node.i == s["publisher"]:
                    continue
                covered = any(up <= s["t"] and down >= s["t"] + a.window
                              for up, down in node.intervals)
                if not covered:
                    continue
                expected += 1
                if text not in node.received:
                    lost += 1
                    if len(lost_examples) < 10:
                        lost_examples.append("%r at node %d" % (text, node.i))
        published = len(self.sends)
        unconfirmed = [t for t, s in self.sends.items()
                       if not ({"sent", "error"} & self.send_kinds.get(s["request_id"], set()))]
        sent = sum(1 for s in self.sends.values()
                   if "sent" in self.send_kinds.get(s["request_id"], set()))
        errors = sum(1 for s in self.sends.values()
                     if "error" in self.send_kinds.get(s["request_id"], set()))
        received = sum(len(n.received) for n in self.nodes)
        bad_exits = {n.i: n.bad_exits for n in self.nodes if n.bad_exits}
        print("")
        print("churn summary: nodes=%d publishers=%d fraction=%.2f period=%ds duration=%ds "
              "window=%ds reliability=%s restart rounds=%d" %
              (a.nodes, a.publishers, a.fraction, a.period, a.duration, a.window, a.reliability,
               self.rounds))
        print("  published            %d (POSTs refused: %d)" % (published, self.send_failures))
        print("  expected deliveries  %d" % expected)
        print("  lost                 %d" % lost)
        print("  unconfirmed sends    %d (message_sent %d, message_error %d)" %
              (len(unconfirmed), sent, errors))
        print("  receptions in all    %d" % received)
        for e in lost_examples:
            print("  lost: %s" % e)
        for t in unconfirmed[:10]:
            print("  unconfirmed: %r" % t)
        if bad_exits:
            print("  nodes that exited with an error status: %s" % bad_exits)
        ok = published > 0 and expected > 0 and lost == 0 and not unconfirmed and not bad_exits
        print("churn result: %s" % ("PASS" if ok else "FAIL"))
        return 0 if ok else 1


def inner(args):
    r = Run(args)
    try:
        r.scenario()
    except Exception as e:  # noqa: BLE001 - reported as a failure with its cause
        print("churn result: FAIL (%s)" % e, flush=True)
        for node in r.nodes:
            if node.proc is not None and node.proc.poll() is None:
                node.proc.kill()
        return 1
    return r.verdict()


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=os.environ.get("LD_BIN", "build/logosdelivery"),
                   help="the logosdelivery program (default $LD_BIN or build/logosdelivery)")
    p.add_argument("--nodes", type=int, default=20)
    p.add_argument("--publishers", type=int, default=10)
    p.add_argument("--fraction", type=float, default=0.3,
                   help="share of the nodes restarted each period (taken from the non-publishers)")
    p.add_argument("--period", type=int, default=60, help="seconds between restart rounds")
    p.add_argument("--duration", type=int, default=600, help="seconds of publishing and churn")
    p.add_argument("--window", type=int, default=60,
                   help="reliability window, seconds: given to the nodes (p2p) and used to decide "
                        "which nodes must have received a message")
    p.add_argument("--reliability", choices=["p2p", "store", "off"], default="p2p",
                   help="p2p: --reliability-mode=p2p; store: --reliability-mode=store; off: no "
                        "reliability flag (the program's default, with no store node: relay alone)")
    p.add_argument("--publish-interval", type=float, default=2.0,
                   help="seconds between two messages of one publisher")
    p.add_argument("--downtime", type=float, default=3.0, help="seconds a restarted node is down")
    p.add_argument("--partition", type=int, default=0,
                   help="also cut one more node off the network for this many seconds each "
                        "round (link down, connections destroyed; the node stays up): losses the "
                        "relay alone cannot repair, to check the checker (0: none)")
    p.add_argument("--warmup", type=int, default=10, help="seconds for the meshes to form")
    p.add_argument("--grace", type=int, default=15,
                   help="seconds waited after max(window, send retry window) before the verdict")
    p.add_argument("--poll-interval", type=float, default=2.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--log-level", default="INFO")
    p.add_argument("--keep", action="store_true", help="keep the node logs even when passing")
    p.add_argument("--node-arg", action="append", default=[],
                   help="extra flag for every node (repeatable)")
    p.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--prefix", help=argparse.SUPPRESS)
    p.add_argument("--workdir", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.nodes < 2 or args.publishers < 1 or args.publishers > args.nodes or \
            args.nodes > 250 * 250 or not 0 < args.fraction <= 1 or args.period <= 0 or \
            args.duration <= 0 or args.window <= 0:
        p.error("need 2 ≤ nodes, 1 ≤ publishers ≤ nodes, 0 < fraction ≤ 1, positive times")
    return args


def main(argv):
    args = parse(argv)
    if args.inner:
        return inner(args)
    why = can_make_namespaces()
    if why is not None:
        print("SKIP: churn test needs network namespaces: %s" % why)
        return SKIP
    args.bin = os.path.abspath(args.bin)
    if not os.access(args.bin, os.X_OK):
        print("churn: no program at %s (--bin or $LD_BIN)" % args.bin)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # clean up when CTest times out
    args.prefix = "ldc%d" % os.getpid()
    args.workdir = tempfile.mkdtemp(prefix="ld-churn-")
    rc = 1
    try:
        make_namespaces(args.prefix, args.nodes)
        cmd = ["ip", "netns", "exec", args.prefix + "hub", sys.executable,
               os.path.abspath(__file__), "--inner"] + argv + \
            ["--bin", args.bin, "--prefix", args.prefix, "--workdir", args.workdir]
        rc = subprocess.call(cmd)
    finally:
        delete_namespaces(args.prefix)
        if rc == 0 and not args.keep:
            shutil.rmtree(args.workdir, ignore_errors=True)
        else:
            print("churn: node logs in %s" % args.workdir)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

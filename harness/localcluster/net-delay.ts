// The packet delayer of the networked local cluster's slow links. The kernels this runs on may
// lack sch_netem (tc's delay qdisc) and nft's queue expression, but have NFQUEUE: an iptables
// rule hands every outgoing packet of a namespace to this small Python program (standard
// library only, raw netlink), which lets each one go after delay ± jitter (uniform, as netem's
// default), so packets reorder as they do under netem. Loss is the bridge's job (nft numgen).
// It runs as `python3 -c DELAYER_SOURCE QUEUE DELAY_MS JITTER_MS` inside the namespace. A packet
// it is late to release is a link slower than the scenario asked for, so it raises its own
// priority where it may (root): on a loaded 2-core machine a starved delayer stalled a round.
export const DELAYER_SOURCE = String.raw`
import heapq, os, random, select, socket, struct, sys, time
try:
    os.nice(-10)
except OSError:
    pass
NETLINK_NETFILTER, SUBSYS_QUEUE = 12, 3
MSG_PACKET, MSG_VERDICT, MSG_CONFIG = 0, 1, 2
NLM_F_REQUEST, NLM_F_ACK, NLMSG_ERROR = 1, 4, 2
NF_ACCEPT, SO_RCVBUFFORCE = 1, 33
queue, delay, jitter = int(sys.argv[1]), float(sys.argv[2]) / 1000, float(sys.argv[3]) / 1000
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20)
s.bind((0, 0))
seq = 0
def attr(kind, data):
    n = 4 + len(data)
    return struct.pack('=HH', n, kind) + data + b'\0' * ((4 - n % 4) % 4)
def send(msg, payload, flags=NLM_F_REQUEST):
    global seq
    seq += 1
    body = struct.pack('=BBH', socket.AF_UNSPEC, 0, socket.htons(queue)) + payload
    s.send(struct.pack('=IHHII', 16 + len(body), (SUBSYS_QUEUE << 8) | msg, flags, seq, 0) + body)
def acked():
    data = s.recv(65536)
    kind = struct.unpack_from('=H', data, 4)[0]
    err = struct.unpack_from('=i', data, 16)[0] if kind == NLMSG_ERROR else 0
    if err:
        sys.exit('netlink error %d configuring queue %d' % (err, queue))
send(MSG_CONFIG, attr(1, struct.pack('!BxH', 1, 0)), NLM_F_REQUEST | NLM_F_ACK)  # bind the queue
acked()
# Packet metadata only (no payload copied), up to 65536 packets held.
send(MSG_CONFIG, attr(2, struct.pack('!IB', 0, 1)) + attr(3, struct.pack('!I', 65536)), NLM_F_REQUEST | NLM_F_ACK)
acked()
print('delayer ready', flush=True)
held = []
while True:
    now = time.monotonic()
    while held and held[0][0] <= now:
        send(MSG_VERDICT, attr(2, struct.pack('!II', NF_ACCEPT, heapq.heappop(held)[1])))
    ready = select.select([s], [], [], max(0, held[0][0] - now) if held else None)[0]
    if not ready:
        continue
    data = s.recv(1 << 20)
    off = 0
    while off + 16 <= len(data):
        length, kind = struct.unpack_from('=IH', data, off)
        if length < 16:
            break
        if kind == (SUBSYS_QUEUE << 8) | MSG_PACKET:
            a = off + 20
            while a + 4 <= off + length:
                alen, akind = struct.unpack_from('=HH', data, a)
                if alen < 4:
                    break
                if akind & 0x7fff == 1:  # packet header: id first
                    due = time.monotonic() + max(0, delay + random.uniform(-jitter, jitter))
                    heapq.heappush(held, (due, struct.unpack_from('!I', data, a + 4)[0]))
                a += (alen + 3) & ~3
        off += (length + 3) & ~3
`;

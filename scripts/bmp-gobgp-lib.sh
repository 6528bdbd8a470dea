# The two-speaker GoBGP set-up of scripts/bmp-gobgp-tests.sh and scripts/bmp-bench.sh, sourced
# by both: A (127.0.0.1) holds the injected RIB and peers with B (127.0.0.2), which sends BMP to
# `ipfib follow`. Needs $work (a temporary directory) and the array pids (started PIDs).

# Free ports: the BGP port (the same on 127.0.0.1 and 127.0.0.2), and two gRPC API ports.
read -r bgp api_a api_b < <(python3 - <<'PY'
import socket
def free(host="127.0.0.1"):
    s = socket.socket(); s.bind((host, 0)); p = s.getsockname()[1]; s.close(); return p
while True:
    p = free()
    try:
        s = socket.socket(); s.bind(("127.0.0.2", p)); s.close(); break
    except OSError:
        pass
print(p, free(), free())
PY
)

# iBGP, so B keeps A's next hops. The AS is a 4-byte private one that the 2014 RIB's paths do
# not hold: with AS 65000 (which one of its paths holds) B puts that path in adj-in but, seeing
# its own AS, sends no route monitoring for it (GoBGP 3.10).
speaker() { # name router-id address neighbor [passive] [bmp]
    cat <<EOF
[global.config]
  as = 4200000001
  router-id = "$2"
  port = $bgp
  local-address-list = ["$3"]
[[neighbors]]
  [neighbors.config]
    neighbor-address = "$4"
    peer-as = 4200000001
  [neighbors.transport.config]
    local-address = "$3"
    remote-port = $bgp
    passive-mode = $5
  [neighbors.timers.config]
    connect-retry = 1
    hold-time = 9
    keepalive-interval = 3
  [[neighbors.afi-safis]]
    [neighbors.afi-safis.config]
      afi-safi-name = "ipv4-unicast"
  [[neighbors.afi-safis]]
    [neighbors.afi-safis.config]
      afi-safi-name = "ipv6-unicast"
EOF
    if [ -n "${6:-}" ]; then
        cat <<EOF
[[bmp-servers]]
  [bmp-servers.config]
    address = "127.0.0.1"
    port = $6
    route-monitoring-policy = "pre-policy"
EOF
    fi
}
gobgp_configs() { # BMP port of ipfib follow
    speaker a 10.255.0.1 127.0.0.1 127.0.0.2 false >"$work/a.toml"
    speaker b 10.255.0.2 127.0.0.2 127.0.0.1 true "$1" >"$work/b.toml"
}
start_b() {
    gobgpd -f "$work/b.toml" -p --api-hosts "127.0.0.1:$api_b" --pprof-disable >"$work/b.log" 2>&1 &
    pids+=($!)
    b_pid=$!
}
start_a() {
    gobgpd -f "$work/a.toml" -p --api-hosts "127.0.0.1:$api_a" --pprof-disable >"$work/a.log" 2>&1 &
    pids+=($!)
    a_pid=$!
}
established() {
    local deadline=$((SECONDS + $1))
    while [ $SECONDS -lt $deadline ]; do
        if gobgp -p "$api_b" neighbor 2>/dev/null | grep -q Establ; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

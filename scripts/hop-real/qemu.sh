#!/bin/bash
# qemu.sh: run hop.c as /init of a Debian kernel under qemu (software
# emulation: the dev VMs have no usable nested KVM), for a side-by-side of
# the real CFS (v6.1) and EEVDF (v6.12) kernels with rqemu's hopper:
#
#   scripts/hop-real/qemu.sh [-k 6.1|6.12] [-p voluntary|none|full] [-s CPUS] [-t] N BURST_US SECONDS
#
# e.g. `scripts/hop-real/qemu.sh -k 6.1 50 100 10` against
# `emu run -topo host -features v5.15-cfs -workload hopper -n 50 -b 100 -d 10000`.
# -t writes the scheduler trace and the runqueue dumps to $OUT/trace.txt
# (tens of MB; the run slows while /sys/kernel/debug/sched/debug is read).
# Installs qemu-system-x86, cpio and gcc's static libc if missing, and
# downloads the kernel packages into $WORK (default /tmp/hop-real); needs
# root for apt-get. Under emulation a guest's runs include the emulator's
# stalls, so its waits are longer and noisier than on hardware: compare
# kernels with each other, not with the hardware's numbers.
set -euo pipefail
kern=6.1 preempt=voluntary smp=2 trace=0
while getopts "k:p:s:t" o; do
	case $o in
	k) kern=$OPTARG ;;
	p) preempt=$OPTARG ;;
	s) smp=$OPTARG ;;
	t) trace=1 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -ne 3 ]; then
	echo "usage: $0 [-k 6.1|6.12] [-p voluntary|none|full] [-s CPUS] [-t] N BURST_US SECONDS" >&2
	exit 2
fi
n=$1 b=$2 d=$3
case $kern in 6.1 | 6.12) ;; *)
	echo "$0: -k: unknown kernel $kern (allowed: 6.1, 6.12)" >&2
	exit 2
	;;
esac
case $preempt in voluntary | none | full) ;; *)
	echo "$0: -p: unknown preemption model $preempt (allowed: voluntary, none, full)" >&2
	exit 2
	;;
esac
here=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-/tmp/hop-real}
out=${OUT:-$work/out}
mkdir -p "$work" "$out"
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v cpio >/dev/null || need+=(cpio)
[ -e /usr/lib/x86_64-linux-gnu/libc.a ] || need+=(libc6-dev)
if [ ${#need[@]} -gt 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
fi

# The kernel: Debian bookworm's 6.1 (CFS, the v5.15 relative-vruntime
# migration protocol) or bookworm-backports' 6.12 (EEVDF), cloud flavour.
vmlinuz=$(ls "$work"/k$kern/boot/vmlinuz-* 2>/dev/null | head -1 || true)
if [ -z "$vmlinuz" ]; then
	apt=(-o Dir::State::Lists="$work/apt/lists" -o Dir::Cache="$work/apt/cache" -o Dir::Etc::sourceparts=- -o Dir::Etc::sourcelist="$work/apt/sources.list")
	mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial"
	suite=bookworm
	[ "$kern" = 6.12 ] && suite=bookworm-backports
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" >"$work/apt/sources.list"
	apt-get "${apt[@]}" update >/dev/null
	pkg=$(apt-cache "${apt[@]}" search "^linux-image-$kern[.0-9+a-z-]*-cloud-amd64-unsigned\$" | awk '{print $1}' | sort -V | tail -1)
	(cd "$work" && apt-get "${apt[@]}" download "$pkg" >/dev/null 2>&1)
	dpkg-deb -x "$work/$pkg"_*.deb "$work/k$kern"
	vmlinuz=$(ls "$work"/k$kern/boot/vmlinuz-* | head -1)
fi

# /init: hop, static.
gcc -O2 -Wall -static -pthread -o "$work/hop" "$here/hop.c"
rm -rf "$work/ir" && mkdir -p "$work/ir/proc" "$work/ir/dev" "$work/ir/sys"
cp "$work/hop" "$work/ir/init"
(cd "$work/ir" && find . | cpio -o -H newc 2>/dev/null | gzip >"$work/init.cpio.gz")

append="console=ttyS0 quiet preempt=$preempt hop.n=$n hop.b=$b hop.d=$d"
serial=()
if [ $trace = 1 ]; then
	append+=" hop.trace=1"
	serial=(-serial mon:stdio -serial "file:$out/trace.txt")
fi
echo "== $(basename "$vmlinuz") preempt=$preempt, $smp CPUs: $n threads per CPU, $b us bursts, $d s"
timeout $((d * 20 + 300)) qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp "$smp" -m 2048 \
	-kernel "$vmlinuz" -initrd "$work/init.cpio.gz" "${serial[@]}" -append "$append" -nographic -no-reboot 2>&1 |
	tr -d '\r' | grep -E "^(hop|t=|creation|first|in-burst|long hop|trace)" || true

# shellcheck shell=sh
# Package helpers shared by scripts/install-deps and scripts/check-deps
# (POSIX sh; sourced, so it sets no options and no traps of its own).

# The packages among "$@" that dpkg does not have installed, on one line.
deps_missing() {
	_m=""
	for _p in "$@"; do
		dpkg-query -W -f='${Status}' "$_p" 2>/dev/null |
			grep -q "install ok installed" || _m="$_m $_p"
	done
	echo "${_m# }"
}

# apt-get install --no-install-recommends of "$@" (names), quietly and
# without questions.
deps_apt_install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends -o DPkg::Lock::Timeout=300 "$@"
}

# What would start a service at boot below root $1 (default /): the
# symlinks under etc/systemd/system (*.wants/, *.requires/, aliases) and
# the S links of the SysV runlevels, one path a line, sorted.
deps_enabled() {
	_r=${1%/}
	{
		find "$_r/etc/systemd/system" -type l 2>/dev/null
		ls -d "$_r"/etc/rc[0-6S].d/S* 2>/dev/null
	} | sed "s|^$_r||" | LC_ALL=C sort
}

# policy-rc.d (invoke-rc.d and deb-systemd-invoke ask it before starting
# a service) that answers 101, "action forbidden", to every request:
# deps_policy_block saves the machine's own one to $1 (a file name that
# must not exist yet) and installs ours; deps_policy_restore $1 puts the
# saved one back, or removes ours. Callers run the restore from a trap.
DEPS_POLICY=/usr/sbin/policy-rc.d
deps_policy_block() {
	if [ -e "$DEPS_POLICY" ]; then
		cp -p "$DEPS_POLICY" "$1"
	fi
	printf '#!/bin/sh\n# %s: start no service while installing\nexit 101\n' \
		"${0##*/}" >"$DEPS_POLICY.new"
	chmod 755 "$DEPS_POLICY.new"
	mv -f "$DEPS_POLICY.new" "$DEPS_POLICY"
}
deps_policy_restore() {
	if [ -e "$1" ]; then
		mv -f "$1" "$DEPS_POLICY"
	else
		rm -f "$DEPS_POLICY"
	fi
}

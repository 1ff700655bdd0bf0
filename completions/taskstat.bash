# SPDX-License-Identifier: LGPL-2.1-or-later
# Bash completion for taskstat-collect, taskstat-top and taskstat-query.
# Installed once per command name in bash-completion's completions folder
# (cmake install, the Debian package), or sourced by hand:
#   . completions/taskstat.bash
# The long options are the ones the command's own --help-all (or --help)
# lists, read once per shell: they never drift from the binary. Values are
# offered for the options that take a word from a list, a file or a folder.

# The long options COMMAND's help lists, one per line (cached).
_taskstat_options()
{
	local cmd=$1 key
	key=_taskstat_opts_${cmd//[^A-Za-z0-9]/_}
	if [[ -z ${!key-} ]]; then
		local help
		help=$("$cmd" --help-all 2>/dev/null) ||
			help=$("$cmd" --help 2>/dev/null)
		printf -v "$key" '%s' "$(printf '%s\n' "$help" |
			grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)"
	fi
	printf '%s\n' "${!key}"
}

# COMPREPLY: the words of the list $2 that start with $1.
_taskstat_words()
{
	local IFS=$'\n'
	COMPREPLY=($(compgen -W "$2" -- "$1"))
}

_taskstat_files()
{
	local IFS=$'\n'
	COMPREPLY=($(compgen -f -- "$1"))
	compopt -o filenames 2>/dev/null
}

_taskstat_dirs()
{
	local IFS=$'\n'
	COMPREPLY=($(compgen -d -- "$1"))
	compopt -o filenames 2>/dev/null
}

# The value of option $2 (the word before the cursor): 0 when handled.
_taskstat_value()
{
	local cur=$1 prev=$2
	case $prev in
	-f|--format) _taskstat_words "$cur" $'table\njsonl\njson\ncsv' ;;
	--stream) _taskstat_words "$cur" $'changes\nfull' ;;
	--attribution) _taskstat_words "$cur" $'auto\nkernel\nexact\nfast' ;;
	--prom-level) _taskstat_words "$cur" $'lean\nfull' ;;
	--log-level) _taskstat_words "$cur" $'error\nwarning\ninfo\ndebug' ;;
	--json-names) _taskstat_words "$cur" $'1.3\n1.2' ;;
	-s|--sort)
		_taskstat_words "$cur" $'name\nexits\nprocs\ncpu\ncpudly\niodly\nread\nwrite\nfail\noom\ntotal' ;;
	--hierarchy)
		_taskstat_words "$cur" "$(printf 'v2\n'; awk '!/^#/ && $4 { print $1 }' /proc/cgroups 2>/dev/null)" ;;
	-u|--user) _taskstat_words "$cur" "$(compgen -u)" ;;
	-o|--output|--record|--replay|--textfile|--web-config)
		_taskstat_files "$cur" ;;
	--containerd-state|--crio-storage|--docker-root|--kubelet-logs)
		_taskstat_dirs "$cur" ;;
	-c|--cgroup)
		# taskstat-query: a cgroup v1 directory; the collector: a glob
		if [[ $3 == *taskstat-query ]]; then
			_taskstat_dirs "$cur"
		else
			COMPREPLY=()
		fi ;;
	-t|--tgid)
		_taskstat_words "$cur" "$(cd /proc 2>/dev/null && compgen -G '[0-9]*')" ;;
	-i|--interval|-d|--duration|-n|--iterations|--count|-w|--watch|--top|\
	--comms|--full-every|--cpus|--shards|--rcvbuf|--kernel-buffer|--depth|\
	--max-depth|--match|-l|--listen|--connect|--prom-max-series|\
	--retire-after|--retire-max|--workload-retire|--exclude-cgroup)
		COMPREPLY=() ;; # a number, an address or a pattern: typed
	*) return 1 ;;
	esac
	return 0
}

_taskstat()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	_taskstat_value "$cur" "$prev" "${COMP_WORDS[0]}" && return 0
	if [[ $cur == -* || ${COMP_WORDS[0]} != *taskstat-query ]]; then
		_taskstat_words "$cur" "$(_taskstat_options "${COMP_WORDS[0]}")"
	else # taskstat-query's PID
		_taskstat_words "$cur" "$(cd /proc 2>/dev/null && compgen -G '[0-9]*')"
	fi
	return 0
}

complete -F _taskstat taskstat-collect taskstat-top taskstat-query

# bash completion for tlbsim (installed as .../bash-completion/completions/tlbsim)
_tlbsim()
{
	local cur prev cmd
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	local tl=${COMP_WORDS[0]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "list run compare sweep merge plot check test import sensitivity calibrate native --help --version" -- "$cur"))
		return
	fi
	cmd=${COMP_WORDS[1]}
	case $prev in
	--profile)
		COMPREPLY=($(compgen -W "$("$tl" list profiles 2>/dev/null | awk '{print $1}')" -- "$cur"))
		compopt -o filenames 2>/dev/null
		COMPREPLY+=($(compgen -f -- "$cur"))
		return ;;
	--policy)
		COMPREPLY=($(compgen -W "$("$tl" list policies 2>/dev/null | awk '/^  /{print $1}')" -- "$cur"))
		return ;;
	--kernel)
		COMPREPLY=($(compgen -W "$("$tl" list kernels 2>/dev/null | awk '/^[^ ]/{print $1}')" -- "$cur"))
		return ;;
	-D)
		COMPREPLY=($(compgen -S = -W "$("$tl" list params 2>/dev/null | awk 'NR>1{print $1}')" -- "$cur"))
		compopt -o nospace 2>/dev/null
		return ;;
	--grid)
		COMPREPLY=($(compgen -S = -W "threads cpus iters profile" -- "$cur"))
		compopt -o nospace 2>/dev/null
		return ;;
	--strategy)
		COMPREPLY=($(compgen -W "random pct dfs" -- "$cur"))
		return ;;
	--memory-model)
		COMPREPLY=($(compgen -W "sc tso" -- "$cur"))
		return ;;
	--trace-format)
		COMPREPLY=($(compgen -W "chrome ftrace" -- "$cur"))
		return ;;
	-o|--output|--svg|--trace)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--x|--y|--by|--facet|--where)
		# the columns of the CSV named on the line
		local f w
		for w in "${COMP_WORDS[@]:2}"; do
			case $w in *.csv) f=$w ;; esac
		done
		[ -r "$f" ] && COMPREPLY=($(compgen -W "$(head -1 "$f" | tr ',' ' ')" -- "$cur"))
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("$tl" "$cmd" --help 2>/dev/null | grep -oE '(^|[ ,])--?[a-zA-Z][a-z-]*' | tr -d ' ,' | sort -u)" -- "$cur"))
		return
	fi
	case $cmd in
	list)
		[ "$COMP_CWORD" -eq 2 ] &&
			COMPREPLY=($(compgen -W "workloads policies profiles params kernels" -- "$cur"))
		[ "$COMP_CWORD" -eq 3 ] && COMPREPLY=($(compgen -W "--json --dump" -- "$cur")) ;;
	plot|merge)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -X '!*.csv' -- "$cur") $(compgen -d -- "$cur")) ;;
	calibrate) ;;
	*)
		COMPREPLY=($(compgen -W "$("$tl" list workloads 2>/dev/null | awk '/^[^ ]/{print $1}')" -- "$cur")) ;;
	esac
}
complete -F _tlbsim tlbsim

#!/bin/bash
# A UCI engine that fails on purpose, for tests/engine.rs: it runs
# `kibitz uci` ($FAKE_ENGINE_KIBITZ) behind a pipe and passes every command
# through, except the `go` commands that $FAKE_ENGINE_PLAN names:
#
#   FAKE_ENGINE_PLAN="5:crash 9:hang 14:garbage 17:noise 20:flood"
#
# counts `go` commands across restarts (in $FAKE_ENGINE_STATE/count) and, at
# the Nth one:
#   crash    exits at once (status 3)
#   hang     stops answering (kibitz must time out and kill it)
#   garbage  prints nonsense and an illegal `bestmove` instead of searching
#   noise    prints nonsense lines, then searches normally (must succeed)
#   flood    prints a 100 KB line without a newline
#   short    searches to depth 1 whatever the limit (as Ethereal 12 answers
#            `go nodes`): far short of it
#   endless  searches until `stop` whatever the limit (as Toga II takes
#            `go nodes`): kibitz must stop it
# An item `all:ACTION` applies to every `go`.
set -u
count_file="$FAKE_ENGINE_STATE/count"
exec 3> >(exec "$FAKE_ENGINE_KIBITZ" uci)
while IFS= read -r line; do
    case "$line" in
    go*)
        n=$(( $(cat "$count_file" 2>/dev/null || echo 0) + 1 ))
        echo "$n" > "$count_file"
        action=""
        for item in ${FAKE_ENGINE_PLAN:-}; do
            if [ "${item%%:*}" = "$n" ] || [ "${item%%:*}" = all ]; then action="${item#*:}"; fi
        done
        case "$action" in
        crash) exit 3 ;;
        hang) exec sleep 3600 ;;
        garbage)
            echo "info depth banana score cp"
            echo "bestmove z9z9"
            continue ;;
        noise)
            echo "hello there"
            echo "info string not a score"
            echo "bestmovebutnotreally" ;;
        flood)
            head -c 100000 /dev/zero | tr '\0' 'x'
            exec sleep 3600 ;;
        short) line="go depth 1" ;;
        endless) line="go infinite" ;;
        esac
        ;;
    quit)
        echo quit >&3
        exit 0 ;;
    esac
    echo "$line" >&3
done

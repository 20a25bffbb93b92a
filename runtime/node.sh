# Sourced first by every npm script of this repository (package.json "scripts": `. runtime/node.sh && tsx
# local/start.ts`): it makes sure the `node` the script's commands run on is one this repository supports, in
# the script's own shell. The tests prove the Lambda functions' line, so test, test:*, bench and docs:examples
# need Node.js 24 or newer; every other script runs on any Node.js from 22 on, as it comes. When the `node` on
# PATH is older (a stock machine's Node.js 20, or 22 for the tests), the repository's own release is put first
# on PATH (runtime/node.mjs: the functions' release, from the npm registry's node-<platform>-<arch> package,
# fetched once per machine into CATALOGUE_NODE_CACHE or ~/.cache/catalogue-read-api).
#
# Sourced rather than run, so that no process stands between npm and the command: signals (Ctrl-C), the exit
# code, stdin and the terminal are the command's own, exactly as without this file. POSIX sh (npm's script
# shell on Linux and macOS); it sets only PATH and leaves no other variable behind.

case "${npm_lifecycle_event-}" in
  test | test:* | bench | docs:examples) catalogue_node_needs=24 ;;
  *) catalogue_node_needs=22 ;;
esac

# The repository's release (.nvmrc, which runtime/node.mjs reads too) and where runtime/node.mjs keeps it, when
# npm's user agent names the platform ("npm/11.19.1 node/v20.20.2 linux x64 …"): found without a process.
catalogue_node_root=$(dirname "${npm_package_json:-./package.json}")
catalogue_node_release=
read -r catalogue_node_release <"$catalogue_node_root/.nvmrc" || true
catalogue_node_release=${catalogue_node_release#v}
catalogue_node_binary=
case "${npm_config_user_agent-}" in
  *" node/v"*" "*" "*)
    catalogue_node_platform=${npm_config_user_agent#* node/v}
    catalogue_node_platform=${catalogue_node_platform#* }
    catalogue_node_arch=${catalogue_node_platform#* }
    catalogue_node_binary="${CATALOGUE_NODE_CACHE:-$HOME/.cache/catalogue-read-api}/node-${catalogue_node_release}/node_modules/node-${catalogue_node_platform%% *}-${catalogue_node_arch%% *}/bin/node"
    unset catalogue_node_platform catalogue_node_arch
    ;;
esac

# The version of the `node` on PATH, with no process started when it is known: the release itself (a script of
# one an earlier script switched: npm hands its user agent on to the npm a script runs, so that one still names
# the Node.js the first npm was started from), or, when npm's own Node.js is the `node` on PATH, the one npm's
# user agent names; otherwise `node` itself is asked.
catalogue_node_path=$(command -v node || true)
catalogue_node_version=
if [ -n "$catalogue_node_release" ] && [ "$catalogue_node_path" = "$catalogue_node_binary" ]; then
  catalogue_node_version=$catalogue_node_release
elif [ "$catalogue_node_path" = "${npm_node_execpath-}" ]; then
  case "${npm_config_user_agent-}" in
    *" node/v"*)
      catalogue_node_version=${npm_config_user_agent#* node/v}
      catalogue_node_version=${catalogue_node_version%% *}
      ;;
  esac
fi
case "$catalogue_node_version" in
  [0-9]*.*) ;;
  *) catalogue_node_version=$(node -p process.versions.node 2>/dev/null || echo 0) ;;
esac
catalogue_node_runs=${catalogue_node_version%%.*}

if [ "$catalogue_node_runs" -lt "$catalogue_node_needs" ]; then
  if [ -z "$catalogue_node_release" ] || [ ! -x "$catalogue_node_binary" ]; then
    # Not there yet (the machine's first run) or not to be found from here: runtime/node.mjs prints its path,
    # fetching it first; on failure it says in one line why and how to get Node.js 24, and the script stops.
    catalogue_node_binary=$(node "$catalogue_node_root/runtime/node.mjs") || exit 1
    catalogue_node_release=${catalogue_node_binary%/node_modules/*}
    catalogue_node_release=${catalogue_node_release##*/node-}
  fi
  echo "Node.js v${catalogue_node_version} is older than npm run ${npm_lifecycle_event:-this} needs (${catalogue_node_needs}): it runs on Node.js ${catalogue_node_release} (runtime/node.sh)" >&2
  PATH=$(dirname "$catalogue_node_binary"):$PATH
  export PATH
fi
unset catalogue_node_needs catalogue_node_runs catalogue_node_version catalogue_node_path
unset catalogue_node_binary catalogue_node_release catalogue_node_root

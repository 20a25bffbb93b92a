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

# The version of the `node` on PATH. npm's user agent names the Node.js that runs npm: when that is the
# `node` on PATH (the usual case), no process is started to ask; otherwise `node` itself is asked.
catalogue_node_version=
case "${npm_config_user_agent-}" in
  *" node/v"*)
    if [ "$(command -v node || true)" = "${npm_node_execpath-}" ]; then
      catalogue_node_version=${npm_config_user_agent#* node/v}
      catalogue_node_version=${catalogue_node_version%% *}
    fi
    ;;
esac
case "$catalogue_node_version" in
  [0-9]*.*) ;;
  *) catalogue_node_version=$(node -p process.versions.node 2>/dev/null || echo 0) ;;
esac
catalogue_node_runs=${catalogue_node_version%%.*}

if [ "$catalogue_node_runs" -lt "$catalogue_node_needs" ]; then
  # The binary's path, fetched first on the machine's first run; on failure, one line saying why and how to
  # get Node.js 24 instead, and the script stops there.
  catalogue_node_binary=$(node "$(dirname "${npm_package_json:-./package.json}")/runtime/node.mjs") || exit 1
  catalogue_node_release=${catalogue_node_binary%/node_modules/*}
  echo "Node.js v${catalogue_node_version} is older than npm run ${npm_lifecycle_event:-this} needs (${catalogue_node_needs}): it runs on Node.js ${catalogue_node_release##*/node-} (runtime/node.sh)" >&2
  PATH=$(dirname "$catalogue_node_binary"):$PATH
  export PATH
  unset catalogue_node_binary catalogue_node_release
fi
unset catalogue_node_needs catalogue_node_runs catalogue_node_version

#!/usr/bin/env bash
# The step of linkcert's GitHub Action (action.yml at the repository root), kept in a file so
# that it runs outside GitHub as well. It reads only the LINKCERT_ACTION_* variables that
# action.yml sets from its inputs, and the runner's GITHUB_OUTPUT and GITHUB_STEP_SUMMARY
# (either may be unset). Keys are never printed: not here, not by linkcert.
#
# Outputs: verdict (passed, failed, incomplete, could not run), exit-code, report-dir, counts
# (the report's totals as JSON), pass, fail. Exit status: linkcert's (0 only for passed).
set -euo pipefail

bin="${LINKCERT_ACTION_BINARY:-}"
if [ -z "$bin" ]; then bin=linkcert; fi
mode="${LINKCERT_ACTION_MODE:-check}"
out="${LINKCERT_ACTION_OUT:-}"
if [ -z "$out" ]; then out=linkcert-reports; fi
artifact="${LINKCERT_ACTION_ARTIFACT_NAME:-}"

# A value for $GITHUB_OUTPUT, when the runner gave one.
output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"; fi
}
summary() {
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then printf '%s\n' "$1" >>"$GITHUB_STEP_SUMMARY"; fi
}
# A workflow command's data: %, CR and LF escaped (as linkcert's own annotations are).
escape() {
  local s="${1//'%'/%25}"
  s="${s//$'\r'/%0D}"
  printf '%s' "${s//$'\n'/%0A}"
}

keys=()
plans=()
# Every key value, so that any text this script shows can have them cut out first.
redact() {
  local s="$1" k
  for k in "${keys[@]+"${keys[@]}"}"; do
    if [ -n "$k" ]; then s="${s//"$k"/***}"; fi
  done
  printf '%s' "$s"
}

# The outputs for a run that never started, and the step's failure.
cannot_run() {
  local why
  why="$(redact "$1")"
  echo "linkcert action: $why" >&2
  echo "::error title=linkcert could not run::$(escape "$why")"
  output verdict "could not run"
  output exit-code 2
  output report-dir "$out"
  summary "## linkcert: could not run"$'\n\n'"$why"
  exit 2
}

# The lines of an input, trimmed, empty ones dropped; its words, one a line.
lines() { printf '%s\n' "$1" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^$/d'; }
words() { printf '%s\n' "$1" | tr -s '[:space:]' '\n' | sed -e '/^$/d'; }
truthy() { case "${1:-false}" in true | True | TRUE | yes | 1) return 0 ;; *) return 1 ;; esac; }

case "$mode" in
  check | load) ;;
  *) cannot_run "mode must be check or load, not '$mode'" ;;
esac
if ! command -v jq >/dev/null; then cannot_run "jq is needed to read the report (apt-get install jq)"; fi
if ! command -v "$bin" >/dev/null; then cannot_run "no linkcert binary at '$bin'"; fi

args=("$mode")
shown=("$mode")
add() { args+=("$@"); shown+=("$@"); }

if [ -n "${LINKCERT_ACTION_TARGET:-}" ]; then add --target "$LINKCERT_ACTION_TARGET"; fi
# Keys go to linkcert in a file only this user reads (--key-file), never on its command
# line: the process list of a shared runner shows argv.
keyfile=""
n=0
while IFS= read -r line; do
  n=$((n + 1))
  plan="${line%%=*}"
  key="${line#*=}"
  if [ "$plan" = "$line" ] || [ -z "$plan" ] || [ -z "$key" ]; then
    cannot_run "keys: line $n is not PLAN=KEY"
  fi
  if [ -z "$keyfile" ]; then
    keyfile="$(umask 077 && mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/linkcert-keys.XXXXXX")"
    trap 'rm -f "$keyfile"' EXIT
  fi
  keys+=("$key")
  plans+=("$plan")
  printf '%s=%s\n' "$plan" "$key" >>"$keyfile"
done < <(lines "${LINKCERT_ACTION_KEYS:-}")
if [ -n "$keyfile" ]; then
  args+=(--key-file "$keyfile")
  shown+=(--key-file "<keys: ${plans[*]}>")
fi
if [ -n "${LINKCERT_ACTION_PROFILE:-}" ]; then add --profile "$LINKCERT_ACTION_PROFILE"; fi
if [ -n "${LINKCERT_ACTION_RATE_WINDOW:-}" ]; then add --rate-window "$LINKCERT_ACTION_RATE_WINDOW"; fi
if truthy "${LINKCERT_ACTION_INSECURE:-}"; then add --insecure; fi

if [ "$mode" = check ]; then
  while IFS= read -r id; do add --partner "$id"; done < <(lines "${LINKCERT_ACTION_PARTNERS:-}")
  while IFS= read -r id; do add --tenant "$id"; done < <(lines "${LINKCERT_ACTION_TENANTS:-}")
  if truthy "${LINKCERT_ACTION_ALLOW_DESTRUCTIVE:-}"; then add --allow-destructive; fi
  if [ -n "${LINKCERT_ACTION_ACCEPT:-}" ]; then add --accept "$LINKCERT_ACTION_ACCEPT"; fi
  fail_on="${LINKCERT_ACTION_FAIL_ON:-}"
  baseline="${LINKCERT_ACTION_BASELINE:-}"
  if [ -n "$baseline" ] && [ ! -f "$baseline" ]; then
    # The first run has no earlier report: gate on every failure, and say so.
    echo "linkcert action: no baseline at $baseline (a first run?): gating on every failure" >&2
    summary "No baseline at \`$baseline\` (a first run?): every failure fails the step."
    baseline=""
    fail_on=any
  fi
  if [ -n "$baseline" ]; then add --baseline "$baseline"; fi
  if [ -n "$fail_on" ]; then add --fail-on "$fail_on"; fi
  # Annotations on stdout and report.md in the step summary, in or out of GitHub.
  add --ci github
else
  while IFS= read -r s; do add --scenario "$s"; done < <(words "${LINKCERT_ACTION_SCENARIOS:-}")
fi
while IFS= read -r word; do add "$word"; done < <(words "${LINKCERT_ACTION_ARGS:-}")
add --out "$out"

echo "linkcert action: $(redact "$bin ${shown[*]}")" >&2
errlog="$(mktemp)"
trap 'rm -f "$errlog" ${keyfile:+"$keyfile"}' EXIT
# stderr shown as it comes and kept, for the reason of a run that could not start.
# A failing run is an outcome to report, not this script's error: no -e around it.
set +e
{
  "$bin" "${args[@]}" 2>&1 1>&3 3>&- | tee "$errlog" >&2 3>&-
  code="${PIPESTATUS[0]}"
} 3>&1
set -e

case "$code" in
  0) verdict=passed ;;
  1) verdict=failed ;;
  3) verdict=incomplete ;;
  *) verdict="could not run" ;;
esac
report="$out/report.json"
if [ "$mode" = load ]; then report="$out/load.json"; fi
counts="{}"
if [ -f "$report" ]; then counts="$(jq -c '.totals // {}' "$report")"; fi

if [ "$mode" = load ] && [ -f "$report" ]; then
  # check writes its own annotations and summary (--ci github); load's come from load.json.
  jq -r '.scenarios[] | select(.verdict == "fail" or .verdict == "incomplete")
    | "\(.name)\t\(.verdict)\t\([.findings[] | select(.verdict == "fail") | .check] | unique | join(", "))"' \
    "$report" | while IFS=$'\t' read -r name v rules; do
    echo "::error title=$(escape "linkcert load $name")::$(escape "$v${rules:+: $rules}")"
  done
  if [ -f "$out/load.md" ]; then summary "$(cat "$out/load.md")"; fi
fi
if [ "$verdict" = "could not run" ]; then
  why="$(redact "$(grep -v '^$' "$errlog" | tail -n 1 || true)")"
  echo "::error title=linkcert could not run::$(escape "exit $code: $why")"
  summary "## linkcert: could not run (exit $code)"$'\n\n'"$why"
fi
if [ -n "$artifact" ]; then
  summary "The reports (report.html, report.json, ...) are in the artifact \`$artifact\`."
fi

output verdict "$verdict"
output exit-code "$code"
output report-dir "$out"
output counts "$counts"
output pass "$(jq -r '.pass // 0' <<<"$counts")"
output fail "$(jq -r '.fail // 0' <<<"$counts")"
echo "linkcert action: $verdict (exit $code), reports in $out" >&2
exit "$code"

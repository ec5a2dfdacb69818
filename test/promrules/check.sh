#!/usr/bin/env bash
# Checks the PrometheusRule's expressions and alert behaviour with promtool: `promtool check rules`
# and the unit tests in rules_test.yaml. promtool comes from Debian's prometheus package, unpacked
# (not installed: no service) into a cache outside the repository.
set -euo pipefail
cd "$(dirname "$0")"
promtool=$(bash ./promtool.sh)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# spec.groups of the PrometheusRule is a Prometheus rule file once unindented under "groups:".
sed -n '/^spec:/,$p' ../../deploy/components/monitoring/prometheusrule.yaml | tail -n +2 | sed 's/^  //' > "$work/rules.yaml"
cp rules_test.yaml "$work/"
"$promtool" check rules "$work/rules.yaml"
cd "$work" && "$promtool" test rules rules_test.yaml

#!/bin/sh
# Copies deploy/prometheus/alert-rules.yaml, fleet-alert-rules.yaml, fleet-channel-alert-rules.yaml and companion-alert-rules.yaml
# into the chart (Helm cannot read files outside the chart); the PrometheusRule template ships these
# copies (the fleet rules with fleet.enabled, the companion rules with companion.enabled).
# test/chart/package.test.ts fails when a copy differs, so run this after editing the alerts.
set -eu
cd "$(dirname "$0")/.."
# Says so only when a copy changed.
for rules in alert-rules.yaml fleet-alert-rules.yaml fleet-channel-alert-rules.yaml companion-alert-rules.yaml; do
  if ! cmp -s "deploy/prometheus/$rules" "charts/fabric-ops/files/$rules"; then
    cp "deploy/prometheus/$rules" "charts/fabric-ops/files/$rules"
    echo "charts/fabric-ops/files/$rules updated from deploy/prometheus/$rules"
  fi
done

#!/bin/sh
# Copies deploy/prometheus/alert-rules.yaml into the chart (Helm cannot read files outside the
# chart); the PrometheusRule template ships this copy. test/chart/package.test.ts fails when the
# two differ, so run this after editing the alerts.
set -eu
cd "$(dirname "$0")/.."
# Says so only when the copy changed.
if ! cmp -s deploy/prometheus/alert-rules.yaml charts/fabric-ops/files/alert-rules.yaml; then
  cp deploy/prometheus/alert-rules.yaml charts/fabric-ops/files/alert-rules.yaml
  echo "charts/fabric-ops/files/alert-rules.yaml updated from deploy/prometheus/alert-rules.yaml"
fi

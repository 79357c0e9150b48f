/**
 * deploy/grafana/fabric-ops-dashboard.json, statically: the datasource variable every panel
 * uses, the job/instance variables, unique ids, a layout without overlaps, and the service's
 * metrics it must show. Its PromQL runs against a real Prometheus in prometheus-live.test.ts.
 */
import { allPanels, dashboardQueries, readCompanionRules, readDashboard, readFleetRules, readRules } from './deploy-files';

const dashboard = readDashboard();
const panels = allPanels(dashboard);
const dataPanels = panels.filter((panel) => panel.type !== 'row');

describe('the Grafana dashboard', () => {
  test('has a datasource variable of type datasource for Prometheus', () => {
    const variable = dashboard.templating.list.find((v) => v.name === 'datasource');
    expect(variable).toMatchObject({ type: 'datasource', query: 'prometheus' });
  });

  test('every panel and every query uses ${datasource}', () => {
    expect(dataPanels.length).toBeGreaterThan(10);
    const wrong = dataPanels.flatMap((panel) => {
      const refs = [panel.datasource, ...(panel.targets ?? []).map((target) => target.datasource)];
      return refs.filter((ref) => ref?.uid !== '${datasource}' || ref.type !== 'prometheus').map((ref) => `${panel.id} ${panel.title}: ${JSON.stringify(ref)}`);
    });
    expect(wrong).toEqual([]);
    for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
      expect(variable.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
    }
  });

  test('has job and instance variables, multi-valued, found from fabric_version', () => {
    const byName = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    expect(byName.get('job')).toMatchObject({ type: 'query', query: 'label_values(fabric_version, job)', multi: true, includeAll: true });
    expect(byName.get('instance')).toMatchObject({
      type: 'query',
      query: 'label_values(fabric_version{job=~"$job"}, instance)',
      multi: true,
      includeAll: true,
    });
  });

  test('every query has an expression filtered by $job and $instance', () => {
    const queries = dashboardQueries(dashboard);
    expect(queries.length).toBeGreaterThanOrEqual(dataPanels.length);
    const unfiltered = queries.filter((q) => !q.expr.includes('job=~"$job", instance=~"$instance"'));
    expect(unfiltered).toEqual([]);
    for (const panel of dataPanels) expect(panel.targets?.length ?? 0).toBeGreaterThan(0);
  });

  test('panel ids are unique positive integers', () => {
    const ids = panels.map((panel) => panel.id);
    expect(ids.every((id) => Number.isInteger(id) && id > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('panels fit the 24-column grid without overlapping', () => {
    const overlaps: string[] = [];
    panels.forEach((a, i) => {
      expect(a.gridPos.x + a.gridPos.w).toBeLessThanOrEqual(24);
      for (const b of panels.slice(i + 1)) {
        const apart =
          a.gridPos.x + a.gridPos.w <= b.gridPos.x ||
          b.gridPos.x + b.gridPos.w <= a.gridPos.x ||
          a.gridPos.y + a.gridPos.h <= b.gridPos.y ||
          b.gridPos.y + b.gridPos.h <= a.gridPos.y;
        if (!apart) overlaps.push(`${a.id} ${a.title} / ${b.id} ${b.title}`);
      }
    });
    expect(overlaps).toEqual([]);
  });

  test('uses the schema of a current Grafana and has a stable uid', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(dashboard.uid).toBe('fabric-ops');
  });

  test('shows health per component, requests per route and code, logs per level, logspec changes and the process', () => {
    const exprs = dashboardQueries(dashboard)
      .map((q) => q.expr)
      .join('\n');
    for (const needed of [
      'health_check_status',
      'health_check_duration_seconds_bucket',
      'by (route)',
      'by (route, code)',
      'logging_entries_written_total',
      'logging_entries_checked_total',
      'logging_spec_changes_total',
      'process_resident_memory_bytes',
      'process_cpu_user_seconds_total',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
      'fabric_version',
      'operations_tls_certificate_expiry_timestamp_seconds',
      'operations_tls_reload_failures_total',
      'operations_connections_refused_total',
      'chaincode_transactions_total',
      'chaincode_transaction_duration_seconds_bucket',
      'chaincode_transactions_in_flight',
      'fleet_nodes_known',
      'fleet_nodes_up',
      'fleet_nodes_healthy',
      'fleet_node_healthy',
      'fleet_node_certificate_expiry_timestamp_seconds',
      'fleet_node_version_info',
      'fleet_logspec_changes_total',
      'fleet_logspec_putbacks_total',
      'companion_certificate_expiry_timestamp_seconds',
      'companion_certificate_file_problems',
      'companion_disk_free_bytes',
      'companion_disk_size_bytes',
      'companion_disk_min_free_bytes',
      'companion_disk_free_inodes',
      'companion_disk_inodes',
    ]) {
      expect(exprs).toContain(needed);
    }
    expect(exprs).toMatch(/sum by \(level\) \(rate\(logging_entries_written_total/);
  });

  test("the fleet rows: the node certificate panel turns red at the fleet alert's 14 days, the health timeline names each state", () => {
    const expiry = dataPanels.find((p) => p.targets?.some((t) => t.expr.includes('fleet_node_certificate_expiry_timestamp_seconds')));
    expect(expiry?.title).toBe('Fleet node operations certificates: time until expiry');
    const fleetRules = readFleetRules().groups.flatMap((group) => group.rules);
    expect(fleetRules.map((rule) => rule.expr)).toContain('fleet_node_certificate_expiry_timestamp_seconds - time() < 14 * 86400');
    const defaults = (expiry as unknown as { fieldConfig: { defaults: { unit: string; thresholds: { steps: { color: string; value: number | null }[] } } } })
      .fieldConfig.defaults;
    expect(defaults.unit).toBe('s');
    expect(defaults.thresholds.steps).toEqual([
      { color: 'red', value: null },
      { color: 'orange', value: 14 * 86400 },
      { color: 'green', value: 30 * 86400 },
    ]);
    const row = panels.find((p) => p.type === 'row' && p.title.startsWith('Fleet'));
    expect(row).toBeDefined();
    // The chains have their own row (test/deploy/fleet-channel-alert-rules.test.ts).
    const fleetPanels = dataPanels.filter((p) => p.targets?.some((t) => t.expr.includes('fleet_') && !/fleet_(channel|node_channels)_/.test(t.expr)));
    expect(fleetPanels.length).toBe(7);
    expect(fleetPanels.every((p) => p.gridPos.y > (row?.gridPos.y ?? Infinity))).toBe(true);
  });

  test("the companion row: the node's certificates as a table of days left, red at the 7-day alert and orange at the 30-day one; the volumes with the checker's threshold", () => {
    type Steps = { color: string; value: number | null }[];
    const row = panels.find((p) => p.type === 'row' && p.title.startsWith('Companion'));
    expect(row).toBeDefined();
    const companionPanels = dataPanels.filter((p) => p.targets?.some((t) => t.expr.includes('companion_')));
    expect(companionPanels.map((p) => p.title)).toEqual([
      'Node certificates: days left',
      'Node certificate files with problems',
      'Node data volumes: free share',
      "Node data volumes: free bytes and the disk checker's threshold",
      'Node data volumes: free inodes share',
    ]);
    expect(companionPanels.every((p) => p.gridPos.y > (row?.gridPos.y ?? Infinity))).toBe(true);

    const table = companionPanels[0] as unknown as {
      type: string;
      targets: { expr: string; format: string; instant: boolean }[];
      fieldConfig: { defaults: { thresholds: { steps: Steps } } };
      transformations: { id: string; options: { sort?: { field: string; desc: boolean }[] } }[];
    };
    expect(table.type).toBe('table');
    expect(table.targets[0]).toMatchObject({ format: 'table', instant: true });
    expect(table.targets[0]?.expr).toMatch(
      /^min by \(instance, kind, key, subject, issuer, serial\) \(companion_certificate_expiry_timestamp_seconds\{.*\} - time\(\)\) \/ 86400$/,
    );
    expect(table.transformations.find((t) => t.id === 'sortBy')?.options.sort).toEqual([{ field: 'days left', desc: false }]);
    const companionExprs = readCompanionRules()
      .groups.flatMap((group) => group.rules)
      .map((rule) => rule.expr);
    expect(companionExprs).toContain('0 < companion_certificate_expiry_timestamp_seconds - time() < 7 * 86400');
    expect(companionExprs).toContain('7 * 86400 <= companion_certificate_expiry_timestamp_seconds - time() < 30 * 86400');
    expect(table.fieldConfig.defaults.thresholds.steps).toEqual([
      { color: 'red', value: null },
      { color: 'orange', value: 7 },
      { color: 'green', value: 30 },
    ]);

    const bytes = companionPanels[3]?.targets?.map((t) => t.expr) ?? [];
    expect(bytes).toEqual([
      'companion_disk_free_bytes{job=~"$job", instance=~"$instance"}',
      'companion_disk_min_free_bytes{job=~"$job", instance=~"$instance"}',
    ]);
    expect(companionExprs).toContain('companion_disk_free_bytes < companion_disk_min_free_bytes');
  });

  test("the certificate expiry panel turns red at the alert's 14 days and orange at 30", () => {
    const panel = dataPanels.find((p) => p.targets?.some((t) => t.expr.includes('operations_tls_certificate_expiry_timestamp_seconds')));
    expect(panel?.title).toBe('Time until certificate expiry');
    const rules = readRules().groups.flatMap((group) => group.rules);
    expect(rules.map((rule) => rule.expr)).toContain('operations_tls_certificate_expiry_timestamp_seconds - time() < 14 * 86400');
    const steps = (panel as unknown as { fieldConfig: { defaults: { unit: string; thresholds: { steps: { color: string; value: number | null }[] } } } })
      .fieldConfig.defaults;
    expect(steps.unit).toBe('s');
    expect(steps.thresholds.steps).toEqual([
      { color: 'red', value: null },
      { color: 'orange', value: 14 * 86400 },
      { color: 'green', value: 30 * 86400 },
    ]);
  });
});

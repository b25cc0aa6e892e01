/** The custom resources Glidepath reads and writes, by group, version and plural. */

export interface ResourceRef {
  group: string;
  version: string;
  plural: string;
  kind: string;
}

export const ROLLOUTS = { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', kind: 'Rollout' } as const satisfies ResourceRef;
export const APPLICATIONS = { group: 'argoproj.io', version: 'v1alpha1', plural: 'applications', kind: 'Application' } as const satisfies ResourceRef;
export const APPLICATION_SETS = { group: 'argoproj.io', version: 'v1alpha1', plural: 'applicationsets', kind: 'ApplicationSet' } as const satisfies ResourceRef;
export const APP_PROJECTS = { group: 'argoproj.io', version: 'v1alpha1', plural: 'appprojects', kind: 'AppProject' } as const satisfies ResourceRef;
export const STAGES = { group: 'kargo.akuity.io', version: 'v1alpha1', plural: 'stages', kind: 'Stage' } as const satisfies ResourceRef;
export const PROMOTIONS = { group: 'kargo.akuity.io', version: 'v1alpha1', plural: 'promotions', kind: 'Promotion' } as const satisfies ResourceRef;
export const FREIGHT = { group: 'kargo.akuity.io', version: 'v1alpha1', plural: 'freights', kind: 'Freight' } as const satisfies ResourceRef;
export const ANALYSIS_RUNS = { group: 'argoproj.io', version: 'v1alpha1', plural: 'analysisruns', kind: 'AnalysisRun' } as const satisfies ResourceRef;

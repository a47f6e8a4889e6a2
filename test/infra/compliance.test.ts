import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type App, CfnResource, Stack, Validations } from 'aws-cdk-lib'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam'
import nag from 'cdk-nag'
import { afterAll, describe, expect, it } from 'vitest'
import { ApiStack } from '../../infra/api-stack.js'
import { DataStack } from '../../infra/data-stack.js'
import { testApp } from '../support/cdk.js'

type Violation = { ruleName: string; severity: string; violatingConstructs?: { constructPath: string }[] }
type Report = { pluginReports: { pluginName: string; violations: Violation[] }[] }

const outdirs: string[] = []
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true })
})

/** Synthesises with the AwsSolutions pack as `infra/app.ts` does and returns the findings left unacknowledged. */
function nagErrors(build: (app: App) => void, severities: readonly string[] = ['error', 'fatal']): string[] {
  const outdir = mkdtempSync(join(tmpdir(), 'loom-nag-'))
  outdirs.push(outdir)
  // Report instead of throwing, so a failure lists every finding.
  const app = testApp({ outdir, context: { '@aws-cdk/core:failSynthOnValidationErrors': false } })
  build(app)
  Validations.of(app).addPlugins(new nag.AwsSolutionsChecks(app))
  const assembly = app.synth()
  const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as Report
  return report.pluginReports
    .flatMap((plugin) => plugin.violations)
    .filter((v) => severities.includes(v.severity))
    .flatMap((v) => (v.violatingConstructs ?? []).map((c) => `${v.ruleName} at ${c.constructPath}`))
}

// Each case synthesises every stack with cdk-nag's rule packs: 10–25 s on two busy cores, so the default 30 s
// leaves no margin when the suite shares the machine.
describe('AwsSolutions checks (cdk-nag 3)', { timeout: 120_000 }, () => {
  it('leave no unacknowledged error on the data and API stacks', () => {
    // Act
    const errors = nagErrors((app) => {
      const data = new DataStack(app, 'Data', { production: true })
      new ApiStack(app, 'Api', { table: data.table as unknown as ITable })
    })

    // Assess
    expect(errors).toEqual([])
  })

  it('leave no unacknowledged error with the opt-in WAF, whose association satisfies APIG3 without acknowledgement', () => {
    // Act
    const findings = nagErrors(
      (app) => {
        const data = new DataStack(app, 'Data', { production: true })
        new ApiStack(app, 'Api', { table: data.table as unknown as ITable, waf: {} })
      },
      ['warning', 'error', 'fatal'],
    )

    // Assess: APIG3 (a stage without a web ACL) is a warning, so warnings count here; with the WAF it is not
    // acknowledged, so only the association can satisfy it.
    expect(findings).toEqual([])
  })

  it('report an unacknowledged error, so the check above can fail', () => {
    // Act
    const errors = nagErrors((app) => {
      const stack = new Stack(app, 'Bad')
      new Role(stack, 'Admin', {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('AdministratorAccess')],
      })
    })

    // Assess
    expect(errors).toEqual([
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AdministratorAccess] at Bad/Admin/Resource',
    ])
  })
})

/**
 * Synthesises with the CDK's built-in CloudFormation validation (the resource schemas and rules `cdk synth` and `cdk
 * deploy` check) and returns what it found. The suite turns that validation off (`CDK_VALIDATION=false` in
 * vitest.config.ts: it costs about 10 s of CPU per synth), so these cases are where it runs.
 */
function cfnFindings(build: (app: App) => void): string[] {
  const outdir = mkdtempSync(join(tmpdir(), 'loom-cfn-'))
  outdirs.push(outdir)
  const app = testApp({
    outdir,
    context: {
      '@aws-cdk/core:failSynthOnValidationErrors': false,
      // Errors stay errors instead of being reported as warnings.
      '@aws-cdk/core:validateAgainstDefaultRules': true,
    },
  })
  build(app)
  const previous = process.env.CDK_VALIDATION
  process.env.CDK_VALIDATION = 'true'
  try {
    const assembly = app.synth()
    const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as Report
    return report.pluginReports
      .filter((plugin) => plugin.pluginName === 'CloudFormation Validate')
      .flatMap((plugin) => plugin.violations)
      .map((v) => `${v.severity} ${v.ruleName}`)
  } finally {
    process.env.CDK_VALIDATION = previous
  }
}

describe("the CDK's built-in CloudFormation validation", { timeout: 120_000 }, () => {
  it('finds nothing in the data and API stacks', () => {
    // Act
    const findings = cfnFindings((app) => {
      const data = new DataStack(app, 'Data', { production: true })
      new ApiStack(app, 'Api', { table: data.table as unknown as ITable })
    })

    // Assess
    expect(findings).toEqual([])
  })

  it('reports a template CloudFormation would refuse, so the check above can fail', () => {
    // Act
    const findings = cfnFindings((app) => {
      const stack = new Stack(app, 'Bad')
      new CfnResource(stack, 'Queue', { type: 'AWS::SQS::Queue', properties: { VisibilityTimeout: 'soon' } })
    })

    // Assess
    expect(findings.length).toBeGreaterThan(0)
  })
})

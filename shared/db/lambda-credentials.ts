import { lambdaCredentials } from '#shared/config'

/** The credential shape the AWS SDK's `credentialDefaultProvider` resolves. */
export type EnvironmentCredentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string }

/**
 * Stand-in for `@aws-sdk/credential-provider-node`'s `defaultProvider`, swapped in by the Lambda bundle (esbuild
 * `alias`, see infra/bundling.ts): Lambda always hands the execution role's credentials over in the environment, so
 * the default chain's shared-ini, SSO, process, web-identity and IMDS providers, with the STS and SSO clients they
 * load (about 130 KB minified), are dead code there. Unbundled code (tests, the local server) keeps the SDK's chain.
 */
export function defaultProvider(): () => Promise<EnvironmentCredentials> {
  return async function environmentCredentials() {
    const credentials = lambdaCredentials()
    if (credentials === undefined) {
      throw new Error('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY environment variables are not set')
    }
    const { sessionToken, ...keys } = credentials
    return sessionToken === undefined ? keys : { ...keys, sessionToken }
  }
}

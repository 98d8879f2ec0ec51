/**
 * What the control plane's domain form answers on AWS: the deployment cannot
 * change at run time, so the answer is the exact deploy-time settings (an ACM
 * certificate, the custom domain of the HTTP API, the DNS record).
 */

/** The control plane function's environment variable naming the custom domain it was deployed with (unset without one). */
export const API_DOMAIN_ENV = 'FLOE_API_DOMAIN'

export function awsDomainAnswer(domain: string, deployedDomain: string | undefined): string {
  const steps = [
    `1. Request a certificate for ${domain} in the stack's region and validate it through DNS: aws acm request-certificate --domain-name ${domain} --validation-method DNS (add the CNAME record ACM lists, wait for the status ISSUED).`,
    `2. Deploy with the custom domain: npx cdk deploy --all -c domainName=${domain} -c certificateArn=<the certificate's ARN, arn:aws:acm:<region>:<account>:certificate/<id>>.`,
    `3. Point ${domain} at the stack output ApiDomainTarget (a CNAME record, or an alias record at the zone apex); HTTPS then answers at https://${domain}. ACM renews the certificate while its validation record stays.`,
  ]
  const now = deployedDomain === undefined
    ? 'This deployment has no custom domain yet.'
    : deployedDomain === domain
      ? `This deployment is already deployed with ${domain} (https://${domain}); nothing to do unless its DNS record is missing (step 3).`
      : `This deployment is deployed with ${deployedDomain}; to move to ${domain}:`
  return `On AWS the domain is set at deploy time: nothing was changed. ${now}\n${steps.join('\n')}`
}

/** The CloudFormation stand-in (DescribeStacks and the calls teardown makes), shared with the rehearsal. */
export { startCloudFormationServer, type CloudFormationServer, type DescribeRequest, type FakeStack, type FakeStackResource } from '../../lib/local/rehearse/cloudformation'

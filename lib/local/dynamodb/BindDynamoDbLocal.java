import java.lang.reflect.Field;
import java.util.Arrays;
import org.eclipse.jetty.server.AbstractNetworkConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * Runs DynamoDB Local listening on one address only.
 *
 * DynamoDB Local has no option for the address it listens on: its Jetty server
 * is built with a port alone, so it accepts connections on every interface.
 * This launcher builds the server from DynamoDB Local's usual command-line
 * arguments, sets the given host on each of its connectors before they open,
 * starts it and waits. Anything it cannot do (a DynamoDB Local whose server is
 * not where it was, a connector without a host) stops it with exit code 2
 * rather than letting the server listen everywhere.
 *
 * Usage: java -cp DynamoDBLocal.jar BindDynamoDbLocal.java HOST [DynamoDB Local arguments]
 * With `--compile DIR` instead, it compiles this file into DIR (a JRE that
 * ships the jdk.compiler module can then start the class without compiling it again).
 */
public class BindDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    if (args.length == 3 && args[0].equals("--compile")) {
      System.exit(compile(args[1], args[2]));
    }
    if (args.length < 1 || args[0].isEmpty()) fail("usage: BindDynamoDbLocal HOST [DynamoDB Local arguments]");
    String host = args[0];
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(Arrays.copyOfRange(args, 1, args.length));
    Server server = jettyServer(proxy);
    Connector[] connectors = server.getConnectors();
    if (connectors.length == 0) fail("DynamoDB Local's server has no connector to bind to " + host);
    for (Connector c : connectors) {
      if (!(c instanceof AbstractNetworkConnector)) fail("cannot set the host of DynamoDB Local's connector " + c);
      ((AbstractNetworkConnector) c).setHost(host);
    }
    try {
      proxy.safeStart();
    } catch (Exception e) {
      e.printStackTrace();
      Throwable cause = e;
      while (cause.getCause() != null) cause = cause.getCause();
      // Last, so that it survives a caller keeping only the end of the output.
      System.err.println("BindDynamoDbLocal: could not start DynamoDB Local on " + host + ": " + cause);
      System.exit(1);
    }
    for (Connector c : connectors) {
      if (!host.equals(((AbstractNetworkConnector) c).getHost())) fail("DynamoDB Local's connector " + c + " is not bound to " + host);
    }
    System.out.println("DynamoDB Local listening on " + host + ":" + ((AbstractNetworkConnector) connectors[0]).getLocalPort());
    proxy.join();
  }

  private static Server jettyServer(DynamoDBProxyServer proxy) {
    try {
      Field f = DynamoDBProxyServer.class.getDeclaredField("server");
      f.setAccessible(true);
      Object server = f.get(proxy);
      if (server instanceof Server) return (Server) server;
      fail("DynamoDB Local's server field holds " + server);
    } catch (ReflectiveOperationException | RuntimeException e) {
      fail("cannot reach the Jetty server of this DynamoDB Local version: " + e);
    }
    return null;
  }

  private static int compile(String source, String outDir) {
    javax.tools.JavaCompiler javac = javax.tools.ToolProvider.getSystemJavaCompiler();
    if (javac == null) {
      System.err.println("this Java runtime has no compiler (module jdk.compiler)");
      return 2;
    }
    return javac.run(null, null, null, "-nowarn", "--release", "17", "-d", outDir, "-cp", System.getProperty("java.class.path"), source);
  }

  private static void fail(String message) {
    System.err.println("BindDynamoDbLocal: " + message);
    System.exit(2);
  }
}

